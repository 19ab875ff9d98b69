import type Bull from 'bull';
import { Cluster } from 'ioredis';
import { internalsOf } from '../../shared/queue/bull-queue-internals.ts';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import { askAgain } from '../../shared/redis/watch-redis-nodes.ts';
import {
  webhookJobOptions,
  type EncodedWebhookJob,
  type WebhookJobData,
} from '../../shared/queue/webhook-queue.ts';

export interface EnqueueTarget {
  /** Supplies bull's key names and the queue's event token; jobs are written by the script below. */
  readonly queue: Bull.Queue<WebhookJobData>;
  readonly redis: RedisClient;
  /**
   * Key prefix of the dedupe marks: the queue prefix, which keeps deployments and test suites apart
   * and, on a cluster, carries the hash tag that puts each mark in its job's slot.
   */
  readonly markPrefix: string;
  readonly dedupeSeconds: number;
  /** On a cluster: an enqueue counts only once a replica has it (ReplicaFence). */
  readonly fence?: ReplicaFence;
}

/**
 * Replication is asynchronous: a master killed right after answering takes the writes its replica
 * had not received yet, and the promoted replica never saw them. With a fence, each enqueue call is
 * followed by `WAIT` on the same connection (one pipeline, so the same node), and an event only
 * counts as queued once a replica acknowledged it; otherwise the call fails and the receiver
 * spools the event (its later replay is a no-op if the write did survive). `ROLE` in the same
 * pipeline tells how many replicas the master has: without one there is nothing a failover could
 * promote, and waiting would only stall every enqueue, so the next calls skip the wait until a
 * replica is attached again.
 */
export class ReplicaFence {
  /** Replicas to wait for in the next call: at most 1; starts at 1 so the first call finds out. */
  replicas = 1;
  readonly waitMs: number;
  /**
   * Told once when the Redis user may not run ROLE (an ACL without @dangerous, as many managed
   * services grant, or ROLE renamed away): the fence then cannot tell a master without a replica, and waits on every call.
   */
  readonly onRoleRefused: ((message: string) => void) | undefined;
  roleRefused = false;
  constructor(waitMs: number, onRoleRefused?: (message: string) => void) {
    this.waitMs = waitMs;
    this.onRoleRefused = onRoleRefused;
  }
}

/** An enqueue the master applied but no replica confirmed within the fence's wait. */
export class NotReplicatedError extends Error {
  readonly code = 'NOT_REPLICATED';
  constructor(waitMs: number) {
    super(`no replica confirmed the enqueue within ${waitMs} ms`);
    this.name = 'NotReplicatedError';
  }
}

export type EnqueueOutcome = 'queued' | 'duplicate';

export const dedupeMarkKey = (markPrefix: string, key: string) => `${markPrefix}:webhook-dedupe:${key}`;

/**
 * Dedupe check, job write and dedupe mark in one atomic script and one round trip, for one event or
 * a batch of them. Each job is written exactly as bull 4's own addJob script writes a non-delayed,
 * non-prioritised job with a custom id (node_modules/bull/lib/commands/addJob-6.lua: same hash
 * fields, wait or paused list, `waiting` notification), so bull's workers, retries and dashboards
 * see an ordinary job; test/receiver/store/enqueue-once.test.ts compares the two field by field,
 * so a bull upgrade that changes the layout fails there. Why not `queue.add`: it cost ~80 us of CPU
 * per event in Node plus two more round trips for the mark (BENCHMARKS.md, "Receiver").
 *
 * Because all three steps are one script, a mark exists only together with its job: a crash can
 * never turn a real event into a "duplicate". A job still present without a mark (its mark expired
 * while it sat in the failed set) is kept as it is, as bull does for an existing custom id; the
 * mark is written again and the delivery counts as a duplicate. Jobs of a batch are handled in
 * order, so the same event twice in one batch is queued once. The mark is checked and written by
 * one `SET NX` (an existing mark is left as it is, its expiry included): one Redis call per event
 * fewer than EXISTS then SET.
 *
 * Unlike addJob it leaves bull's id counter alone: bull numbers only jobs added without an id from
 * it, and every job here has one, so its INCR was a Redis call per event for nothing (BENCHMARKS.md,
 * "Receiver").
 *
 * The batch's new jobs go into the wait list with one LPUSH at the end, in the order one LPUSH per
 * job would leave them: a `redis.call` costs Redis about 2 us on top of the command itself, and
 * nothing outside the script can see the list before it ends (BENCHMARKS.md, "Receiver").
 *
 * Fenced (a master with replicas: WAIT follows in the same pipeline), a duplicate writes its mark
 * again, TTL kept: WAIT covers the connection's own last write only (Redis 7.2 and later; 7.0
 * counted any command), so a duplicate that wrote nothing passed WAIT at once on a connection
 * other than its first write's (a restarted receiver, the spool's replay), and the spooled copy of
 * an event its master held unreplicated was dropped as a duplicate: lost if that master failed.
 * Written again, the mark moves the connection past the first write, which WAIT then covers.
 *
 * KEYS: wait, paused, meta-paused, then per job: mark, job hash.
 * ARGV: mark seconds, job name, timestamp, queue token, fenced ('1' or '0'), then per job: job id,
 * data JSON, opts JSON.
 * Returns one 1 (queued) or 0 (duplicate) per job.
 */
const enqueueScript = `
local target = KEYS[1]
if redis.call('EXISTS', KEYS[3]) == 1 then target = KEYS[2] end
local channel = KEYS[1] .. 'ing@' .. ARGV[4]
local results = {}
local queued = {}
for j = 1, (#KEYS - 3) / 2 do
  local mark, jobKey = KEYS[2 + 2 * j], KEYS[3 + 2 * j]
  local id = ARGV[3 + 3 * j]
  local added = 0
  local marked = redis.call('SET', mark, '1', 'EX', ARGV[1], 'NX')
  if marked and redis.call('EXISTS', jobKey) == 0 then
    redis.call('HSET', jobKey, 'name', ARGV[2], 'data', ARGV[4 + 3 * j], 'opts', ARGV[5 + 3 * j],
      'timestamp', ARGV[3], 'delay', '0', 'priority', '0')
    queued[#queued + 1] = id
    redis.call('PUBLISH', channel, id)
    added = 1
  elseif not marked and ARGV[5] == '1' then
    redis.call('SET', mark, '1', 'KEEPTTL')
  end
  results[j] = added
end
if #queued > 0 then redis.call('LPUSH', target, unpack(queued)) end
return results
`;

const commandName = 'webhookEnqueue';

interface WithEnqueueCommand {
  [commandName](numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<number[]>;
}

const defined = new WeakSet<RedisClient>();

/** Bull's name for jobs added without one (Job.DEFAULT_JOB_NAME). */
const defaultJobName = '__default__';

// The options bull's Job would store: the queue's options plus the id, delay and timestamp, in
// that key order. Only the id and the time vary, so the rest is serialised once; the contract test
// compares the result with what queue.add stores.
const optsPrefix = `${JSON.stringify(webhookJobOptions).slice(0, -1)},"jobId":`;
const optsJson = (jobId: string, timestamp: number) =>
  `${optsPrefix}${JSON.stringify(jobId)},"delay":0,"timestamp":${timestamp}}`;

/**
 * Puts events into the queue unless each was queued within the dedupe window (docs/receiver.md#dedupe-in-one-step-with-the-enqueue;
 * dedupe), in one script call. The job id is the dedupe key, so the spool drainer re-adding an
 * event whose earlier add did complete after a timeout is a no-op.
 */
export async function enqueueMany(
  target: EnqueueTarget,
  jobs: readonly EncodedWebhookJob[],
): Promise<EnqueueOutcome[]> {
  if (jobs.length === 0) return [];
  const { redis } = target;
  const queue = internalsOf(target.queue);
  if (!defined.has(redis)) {
    redis.defineCommand(commandName, { lua: enqueueScript });
    defined.add(redis);
  }
  const timestamp = Date.now();
  const { keys } = queue;
  const keyList: string[] = [keys.wait, keys.paused, keys['meta-paused']];
  const argList: (string | number)[] = [
    target.dedupeSeconds,
    defaultJobName,
    timestamp,
    queue.token,
    target.fence && target.fence.replicas > 0 ? '1' : '0',
  ];
  for (const job of jobs) {
    keyList.push(dedupeMarkKey(target.markPrefix, job.dedupeKey), queue.toKey(job.dedupeKey));
    argList.push(job.dedupeKey, job.json, optsJson(job.dedupeKey, timestamp));
  }
  const added = target.fence
    ? await fencedCall(target.redis, target.fence, [keyList.length, ...keyList, ...argList])
    : await (redis as unknown as WithEnqueueCommand)[commandName](keyList.length, ...keyList, ...argList);
  return added.map((flag) => (flag === 1 ? 'queued' : 'duplicate'));
}

/** ROLE, the enqueue script and (when the master has a replica) WAIT, in one pipeline. */
async function fencedCall(
  redis: RedisClient,
  fence: ReplicaFence,
  keysAndArgs: readonly (string | number)[],
): Promise<number[]> {
  const waitFor = fence.replicas;
  const pipeline = redis.pipeline();
  pipeline.call('ROLE');
  (pipeline as unknown as WithEnqueueCommand)[commandName](...(keysAndArgs as [number, ...string[]]));
  if (waitFor > 0) pipeline.call('WAIT', waitFor, fence.waitMs);
  const replies = (await pipeline.exec()) ?? [];
  const [roleError] = replies[0] ?? [];
  // ROLE only informs the fence: refused on its own (NOPERM from an ACL, or an unknown command where
  // it was renamed away), the script's and WAIT's replies still decide. Thrown, it failed every call
  // whose events the script had queued, and the spool drained none of them, ever. An error of the
  // node itself (LOADING, a demoted master) fails the script too, and is thrown below.
  const roleRefused = roleError instanceof Error && !askAgain(roleError);
  if (roleRefused && !fence.roleRefused) fence.onRoleRefused?.(roleError.message);
  fence.roleRefused ||= roleRefused;
  const failed = replies.find(([error], index) => error && !(index === 0 && roleRefused))?.[0];
  if (failed) {
    // ioredis retries a cluster pipeline only when every command failed alike; here ROLE still
    // answers on a demoted master (and WAIT fails differently), so nothing would ever re-read the
    // slot map and every later call would go to the old node. Re-read it for the next call.
    if (redis instanceof Cluster && /^(MOVED|ASK|READONLY|CLUSTERDOWN|TRYAGAIN)\b/.test(failed.message)) {
      redis.refreshSlotsCache();
    }
    throw failed;
  }
  const role = replies[0]?.[1] as [string, number, unknown[]] | undefined;
  if (role?.[0] === 'master') fence.replicas = Math.min(1, role[2].length);
  if (waitFor > 0 && Number(replies[2]?.[1]) < waitFor) throw new NotReplicatedError(fence.waitMs);
  return replies[1]?.[1] as number[];
}

/** enqueueMany for one event. */
export async function enqueueOnce(target: EnqueueTarget, job: EncodedWebhookJob): Promise<EnqueueOutcome> {
  const [outcome] = await enqueueMany(target, [job]);
  if (outcome === undefined) throw new Error('the enqueue script returned no outcome');
  return outcome;
}

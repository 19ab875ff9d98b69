import type Bull from 'bull';
import type { Redis } from 'ioredis';
import { webhookJobOptions, type WebhookJobData } from '../../shared/queue/webhook-queue.ts';

export interface EnqueueTarget {
  /** Supplies bull's key names and the queue's event token; jobs are written by the script below. */
  readonly queue: Bull.Queue<WebhookJobData>;
  readonly redis: Redis;
  /** Key prefix of the dedupe marks (the queue prefix keeps deployments and test suites apart). */
  readonly markPrefix: string;
  readonly dedupeSeconds: number;
}

export type EnqueueOutcome = 'queued' | 'duplicate';

export const dedupeMarkKey = (markPrefix: string, key: string) => `${markPrefix}:webhook-dedupe:${key}`;

/**
 * Dedupe check, job write and dedupe mark in one atomic script and one round trip. The job is
 * written exactly as bull 4's own addJob script writes a non-delayed, non-prioritised job with a
 * custom id (node_modules/bull/lib/commands/addJob-6.lua: same hash fields, wait or paused list,
 * `waiting` notification), so bull's workers, retries and dashboards see an ordinary job;
 * test/receiver/store/enqueue-once.test.ts compares the two field by field, so a bull upgrade that
 * changes the layout fails there. Why not `queue.add`: it cost ~80 us of CPU per event in Node plus
 * two more round trips for the mark, a third of the receiver's budget (BENCHMARKS.md, "Receiver").
 *
 * Because all three steps are one script, a mark exists only together with its job: a crash can
 * never turn a real event into a "duplicate". A job still present without a mark (its mark expired
 * while it sat in the failed set) is kept as it is, as bull does for an existing custom id; the
 * mark is written again and the delivery counts as a duplicate.
 *
 * KEYS: mark, wait, paused, meta-paused, id counter, job hash.
 * ARGV: mark seconds, job id, job name, data JSON, opts JSON, timestamp, queue token.
 */
const enqueueScript = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local added = 0
if redis.call('EXISTS', KEYS[6]) == 0 then
  redis.call('INCR', KEYS[5])
  redis.call('HSET', KEYS[6], 'name', ARGV[3], 'data', ARGV[4], 'opts', ARGV[5],
    'timestamp', ARGV[6], 'delay', '0', 'priority', '0')
  local target = KEYS[2]
  if redis.call('EXISTS', KEYS[4]) == 1 then target = KEYS[3] end
  redis.call('LPUSH', target, ARGV[2])
  redis.call('PUBLISH', KEYS[2] .. 'ing@' .. ARGV[7], ARGV[2])
  added = 1
end
redis.call('SET', KEYS[1], '1', 'EX', ARGV[1])
return added
`;

const commandName = 'webhookEnqueueOnce';

interface WithEnqueueCommand {
  [commandName](...keysAndArgs: (string | number)[]): Promise<number>;
}

/** The parts of bull's Queue its type declarations leave out: key names and the event token. */
interface BullQueueInternals {
  readonly keys: Record<'wait' | 'paused' | 'meta-paused' | 'id', string>;
  readonly token: string;
  toKey(id: string): string;
}

const defined = new WeakSet<Redis>();

/** Bull's name for jobs added without one (Job.DEFAULT_JOB_NAME). */
const defaultJobName = '__default__';

// The options bull's Job would store: the queue's options plus the id, delay and timestamp, in
// that key order. Only the id and the time vary, so the rest is serialised once; the contract test
// compares the result with what queue.add stores.
const optsPrefix = `${JSON.stringify(webhookJobOptions).slice(0, -1)},"jobId":`;
const optsJson = (jobId: string, timestamp: number) =>
  `${optsPrefix}${JSON.stringify(jobId)},"delay":0,"timestamp":${timestamp}}`;

/**
 * Puts one event into the queue unless it was queued within the dedupe window (README,
 * "Receiver": dedupe). The job id is the dedupe key, so the spool drainer re-adding an event whose
 * earlier add did complete after a timeout is a no-op.
 */
export async function enqueueOnce(target: EnqueueTarget, job: WebhookJobData): Promise<EnqueueOutcome> {
  const { redis } = target;
  const queue = target.queue as unknown as BullQueueInternals;
  if (!defined.has(redis)) {
    redis.defineCommand(commandName, { numberOfKeys: 6, lua: enqueueScript });
    defined.add(redis);
  }
  const timestamp = Date.now();
  const { keys } = queue;
  const added = await (redis as unknown as WithEnqueueCommand)[commandName](
    dedupeMarkKey(target.markPrefix, job.dedupeKey),
    keys.wait,
    keys.paused,
    keys['meta-paused'],
    keys.id,
    queue.toKey(job.dedupeKey),
    target.dedupeSeconds,
    job.dedupeKey,
    defaultJobName,
    JSON.stringify(job),
    optsJson(job.dedupeKey, timestamp),
    timestamp,
    queue.token,
  );
  return added === 1 ? 'queued' : 'duplicate';
}

import { Cluster, type Redis } from 'ioredis';
import type { Db } from 'mongodb';
import { WEBHOOK_QUEUE_NAME } from '../../../shared/queue/webhook-queue.ts';
import { createRedis } from '../../../shared/redis/create-redis.ts';
import type { RedisTarget } from '../../../shared/redis/redis-target.ts';
import { EVENTS } from '../../../shared/tray/tray-record.ts';
import type { BurstBody, Delivery } from './burst.ts';
import { checkMongoTrayAgainstModel, type TrayMismatch } from './check-tray-against-model.ts';
import { checkUnreadAgainstModel, type UnreadMismatch } from './check-unread-against-model.ts';
import { queueCounts } from './queue-counts.ts';

/** Bounded wait until the worker(s) ran every job (none waiting, active or delayed). Returns the wait in ms. */
export async function waitUntilQueueEmpty(
  redisUrl: RedisTarget,
  prefix: string,
  timeoutMs: number,
): Promise<number> {
  const started = performance.now();
  const deadline = Date.now() + timeoutMs;
  let counts = await queueCounts(redisUrl, prefix);
  while (Date.now() < deadline) {
    if (counts.pending === 0) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 200));
    counts = await queueCounts(redisUrl, prefix);
  }
  throw new Error(`the worker did not empty the queue within ${timeoutMs} ms: ${JSON.stringify(counts)}`);
}

export interface EndToEndLedger {
  acknowledged: number;
  storedInEvents: number;
  /** Acknowledged events missing from `events`: must be 0. */
  lost: number;
  /** Documents beyond one per event id (cannot happen, `_id` is the dedupe key; counted anyway). */
  duplicated: number;
  /** Stored events that were sent but never acknowledged (a crash mid-request): allowed. */
  storedUnacknowledged: number;
  /** Stored events nobody sent: must be 0. */
  unknown: number;
  /** Tray records and users the reference model of the stored events expects. */
  trayRecords: number;
  trayUsers: number;
  /** Differences between the tray and the model: must be 0 ("side effects once"). */
  trayMismatches: number;
  /** Users whose totalUnreadCount (tray API) differs from the model's record count: must be 0. */
  unreadMismatches: number;
}

/**
 * The end-to-end ledger: every acknowledged event in `events` exactly once, and the tray (records
 * in the database, unread counts through the API) equal to the reference model of exactly the
 * events that were stored (an unacknowledged event may have
 * been stored and applied; it then belongs in the model too). `firstMismatches` is for messages.
 */
export async function readEndToEndLedger(
  db: Db,
  bodies: readonly BurstBody[],
  deliveries: readonly Delivery[],
  /** Port of a running tray-service process, whose unread counts are compared too. */
  trayPort: number,
): Promise<{ ledger: EndToEndLedger; firstMismatches: readonly (TrayMismatch | UnreadMismatch)[] }> {
  const acked = new Set(deliveries.filter((d) => d.status === 200).map((d) => d.id));
  const sent = new Set(bodies.map((b) => b.id));
  const events = db.collection<{ _id: string }>(EVENTS);
  const stored = new Set((await events.find({}, { projection: { _id: 1 } }).toArray()).map((e) => e._id));
  const processed = bodies.filter((b) => stored.has(b.id));
  const tray = await checkMongoTrayAgainstModel(db, processed);
  const unread = await checkUnreadAgainstModel(trayPort, processed);
  return {
    ledger: {
      acknowledged: acked.size,
      storedInEvents: stored.size,
      lost: [...acked].filter((id) => !stored.has(id)).length,
      duplicated: (await events.countDocuments({})) - stored.size,
      storedUnacknowledged: [...stored].filter((id) => sent.has(id) && !acked.has(id)).length,
      unknown: [...stored].filter((id) => !sent.has(id)).length,
      trayRecords: tray.records,
      trayUsers: tray.users,
      trayMismatches: tray.mismatches.length,
      unreadMismatches: unread.mismatches.length,
    },
    firstMismatches: [...tray.mismatches, ...unread.mismatches].slice(0, 10),
  };
}

/**
 * Jobs bull recovered as stalled (their `stalledCounter` is set): each was started by a worker
 * that died or lost Redis, then run again from the start, so its side effects were attempted twice.
 */
export async function recoveredStalledJobs(redisUrl: RedisTarget, prefix: string): Promise<number> {
  const redis = createRedis(redisUrl, { maxRetriesPerRequest: 3 });
  const base = `${prefix}:${WEBHOOK_QUEUE_NAME}`;
  try {
    // SCAN is per node: on a cluster, every master (the queue's keys are on one of them).
    if (redis instanceof Cluster && redis.status !== 'ready') {
      await new Promise((resolve) => redis.once('ready', resolve));
    }
    const nodes: Redis[] = redis instanceof Cluster ? redis.nodes('master') : [redis];
    let recovered = 0;
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', `${base}:*`, 'COUNT', 1000);
        cursor = next;
        const jobKeys = keys.filter((key) => /^[0-9a-f]{64}$/.test(key.slice(base.length + 1)));
        for (const key of jobKeys) {
          if (Number((await node.hget(key, 'stalledCounter')) ?? 0) > 0) recovered += 1;
        }
      } while (cursor !== '0');
    }
    return recovered;
  } finally {
    redis.disconnect();
  }
}

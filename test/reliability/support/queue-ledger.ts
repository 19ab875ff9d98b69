import { Redis } from 'ioredis';
import { WEBHOOK_QUEUE_NAME } from '../../../shared/queue/webhook-queue.ts';

/** Where bull keeps job ids, one list or sorted set per state (bull 4 key layout). */
const lists = ['wait', 'active', 'paused'] as const;
const sortedSets = ['delayed', 'completed', 'failed'] as const;

export interface QueueLedger {
  /** How many times each job id appears across all states: 1 means queued exactly once. */
  readonly occurrences: ReadonlyMap<string, number>;
  /** Job ids with a job hash (the event's data). */
  readonly stored: ReadonlySet<string>;
}

/**
 * Reads the webhook queue straight from Redis. A job id listed twice (say in `wait` and `active`)
 * would be processed twice, which bull's own getJobs would hide, so the states are counted here.
 */
export async function readQueueLedger(redisUrl: string, prefix: string): Promise<QueueLedger> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  try {
    const base = `${prefix}:${WEBHOOK_QUEUE_NAME}`;
    const occurrences = new Map<string, number>();
    const count = (ids: string[]) => {
      for (const id of ids) occurrences.set(id, (occurrences.get(id) ?? 0) + 1);
    };
    for (const state of lists) count(await redis.lrange(`${base}:${state}`, 0, -1));
    for (const state of sortedSets) count(await redis.zrange(`${base}:${state}`, 0, -1));
    const stored = new Set<string>();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${base}:*`, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        const id = key.slice(base.length + 1);
        if (/^[0-9a-f]{64}$/.test(id)) stored.add(id);
      }
    } while (cursor !== '0');
    return { occurrences, stored };
  } finally {
    redis.disconnect();
  }
}

export interface LedgerCheck {
  acknowledged: number;
  storedAcknowledged: number;
  lost: number;
  duplicated: number;
  /** Jobs of events that were sent but not acknowledged (a crash mid-request): allowed, counted. */
  storedUnacknowledged: number;
  /** Jobs nobody sent: must be 0. */
  unknown: number;
}

/** Compares acknowledged event ids with the queue: each must be stored and listed exactly once. */
export function checkLedger(
  ledger: QueueLedger,
  sent: readonly string[],
  acked: ReadonlySet<string>,
): LedgerCheck {
  const sentSet = new Set(sent);
  let lost = 0;
  let storedAcknowledged = 0;
  for (const id of acked) {
    if (ledger.stored.has(id) && ledger.occurrences.get(id) === 1) storedAcknowledged += 1;
    else if (!ledger.stored.has(id) || (ledger.occurrences.get(id) ?? 0) === 0) lost += 1;
  }
  const duplicated = [...ledger.occurrences.values()].filter((n) => n > 1).length;
  const storedUnacknowledged = [...ledger.stored].filter((id) => sentSet.has(id) && !acked.has(id)).length;
  const unknown = [...ledger.stored].filter((id) => !sentSet.has(id)).length;
  return { acknowledged: acked.size, storedAcknowledged, lost, duplicated, storedUnacknowledged, unknown };
}

import type { Logger } from '../../shared/logging/create-logger.ts';
import { cappedExponentialDelay } from '../../shared/queue/capped-exponential-backoff.ts';
import type { StorageGate } from './storage-gate.ts';
import {
  isStorageConnectionLost,
  isStorageRefusingWrites,
  isStorageUnavailable,
} from './storage-unavailable.ts';

/**
 * Runs of one job in a row, while the storage answers, that may meet a failed connection before
 * the next spends an attempt. After a failover behind one address every pooled connection may
 * reach the former primary, and each fails once before it is dropped: the default pool's size
 * (PG_POOL_SIZE), so a job meeting all of them still keeps its attempts.
 */
const LOST_CONNECTION_RETRIES = 10;

/**
 * Runs of one job in a row that may meet the storage down before the next spends an attempt. An
 * outage is not the job's fault, and a long one is met once (the job waits at the gate until it
 * ends); a job held through this many outages is the likelier cause of them (a statement the
 * server's backend is killed for): bounded, so that it spends its attempts and goes to the failed
 * set instead of taking the database down for ever. Jobs in flight with it that complete between
 * the outages are not held; a slower one meets them too and may spend an attempt (retried with
 * backoff). The margin is for one restart met as several (a server answering its ping before it
 * takes writes). Counted per attempt, not reset by the job's other failures in between.
 */
export const OUTAGE_RETRIES = 5;

/**
 * A storage that answers its ping but says "not now" to a job's statements (a statement timeout in
 * a lock storm, out of connections or of memory: isStorageUnavailable) is not the
 * job's fault: the job waits and runs again, STORAGE_BUSY_WAITS times, the waits doubling from
 * STORAGE_BUSY_FIRST_WAIT_MS up to 30 s (about a minute in all), before it spends an attempt.
 * Spent at once, every job in the backlog used its attempts within minutes and went to the
 * failed set while the ping, a read, still passed. Bounded, so that a job whose own statement
 * always runs out of time still spends its attempts.
 */
const STORAGE_BUSY_WAITS = 6;
const STORAGE_BUSY_FIRST_WAIT_MS = 1_000;
const STORAGE_BUSY_MAX_WAIT_MS = 30_000;

export interface StorageFailureOptions {
  logger: Logger;
  /** What the log says of the job when its outages spend an attempt. */
  job: Record<string, unknown>;
  /** The first wait after "not now" or a refused write (STORAGE_BUSY_FIRST_WAIT_MS; tests shorten it). */
  busyFirstWaitMs?: number;
}

/**
 * Runs `run` (one attempt of a queued job: the tray worker's apply, a moderation decision's
 * delivery) until it succeeds or fails for a reason of its own: the storage's failures are never
 * the job's (docs/operations.md#when-a-dependency-is-down). An outage holds it at the gate and a
 * refused write (a full disk, a read-only server) for as long as either lasts, a failed connection
 * or "not now" a bounded number of times; each is run again in place, spending no attempt.
 */
export async function runPastStorageFailures<T>(
  gate: StorageGate,
  run: () => Promise<T>,
  options: StorageFailureOptions,
): Promise<T> {
  // The waits after a storage's "not now" or refused write: doubling from the first, capped, and
  // without jitter (a job waits alone; it is not one of many retried by the queue at once).
  const busyWait = {
    firstMs: options.busyFirstWaitMs ?? STORAGE_BUSY_FIRST_WAIT_MS,
    maxMs: STORAGE_BUSY_MAX_WAIT_MS,
  };
  const busyWaitMs = (waitsBefore: number) => cappedExponentialDelay(waitsBefore + 1, busyWait, () => 0);
  for (let outages = 0, lostConnections = 0, busyWaits = 0, refusals = 0; ;) {
    await gate.whenOpen(refusals > 0);
    try {
      const result = await run();
      if (refusals > 0) gate.leftRefusal();
      return result;
    } catch (error) {
      // Only a failure of the job's own spends an attempt; during an outage it runs again, a few
      // outages per attempt at most (OUTAGE_RETRIES).
      if (await gate.isOutage()) {
        if (++outages <= OUTAGE_RETRIES) continue;
        options.logger.warn(
          { ...options.job, outages },
          'job met the storage down on run after run: it spends an attempt (it may be what takes the storage down)',
        );
        if (refusals > 0) gate.leftRefusal();
        throw error;
      }
      // The storage answers, but the job's connection failed: one made before a failover that
      // still reaches the former primary (dropped now), or one the server ended. Not the job's
      // fault either: it runs again on another connection. Bounded, so that a job which itself
      // breaks its connection still spends its attempts.
      if (isStorageConnectionLost(error) && ++lostConnections <= LOST_CONNECTION_RETRIES) continue;
      // Read-only (still, on fresh connections) or a full disk: however long it lasts, the job
      // waits and tries again, and the process takes no new jobs meanwhile. Spending attempts,
      // the whole backlog went to the failed set within minutes while the ping passed.
      if (isStorageRefusingWrites(error)) {
        await gate.refused(busyWaitMs(refusals));
        refusals += 1;
        continue;
      }
      if (refusals > 0) {
        gate.leftRefusal();
        refusals = 0;
      }
      if (isStorageConnectionLost(error)) throw error;
      if (isStorageUnavailable(error) && busyWaits < STORAGE_BUSY_WAITS) {
        const waitMs = busyWaitMs(busyWaits);
        busyWaits += 1;
        await gate.busy(waitMs);
        continue;
      }
      throw error;
    }
  }
}

import { intInRange, positiveInt, wholeNumber } from './env-types.ts';

/**
 * The longest pause between two rounds of the snooze wake-up: a snooze is back on its user's
 * streams within 1 s of its end (docs/tray-rules.md#inbox), and a round that starts this long after
 * the end still has a quarter of that second to claim the records and publish them.
 */
export const MAX_WAKE_INTERVAL_MS = 750;

/** Variables of the tray service's queue consumer, events store, tray records. */
export const trayWorkerShape = {
  /**
   * Jobs one worker process handles at once; records stay correct at any value (compare-and-set).
   * A job mostly waits on database round trips, and concurrent jobs share their insert and update
   * commands: on the embedded default 64 carried about 1.3x the grouped comments of 16, and 128
   * little more (BENCHMARKS.md, "Tray worker").
   */
  TRAY_WORKER_CONCURRENCY: positiveInt(64, 256),
  /**
   * Community-post fan-outs one worker process runs at once (the other jobs go on meanwhile). A
   * fan-out holds the community's records in memory while it writes them, so this, not the job
   * concurrency, bounds the worker's memory in a burst of posts to large communities.
   */
  TRAY_FANOUT_CONCURRENCY: positiveInt(4, 64),
  /** Days a stored event is kept after it was received. */
  EVENTS_RETENTION_DAYS: positiveInt(30, 3650),
  /** Days a tray record is kept after its lastUpdate (docs/contract.md#tray-records: 90). */
  TRAY_RETENTION_DAYS: positiveInt(90, 3650),
  /** Milliseconds between purges of expired records and events (servers without TTL indexes need them). */
  TRAY_PURGE_INTERVAL_MS: intInRange(3_600_000, 1_000, 7 * 24 * 3_600_000),
  /**
   * Wait before a failed job's second attempt, doubling per attempt up to TRAY_RETRY_MAX_DELAY_MS,
   * each wait less up to a fifth at random (RETRY_JITTER): with the 20 attempts the receiver gives
   * each job, the defaults span 6 to 7.5 minutes. A storage outage spends no attempts (the worker
   * waits for the storage instead), so this window only bounds how long a job failing for a reason
   * of its own keeps being tried.
   */
  TRAY_RETRY_FIRST_DELAY_MS: positiveInt(1_000, 3_600_000),
  /** Longest wait between two attempts of a job. */
  TRAY_RETRY_MAX_DELAY_MS: positiveInt(30_000, 3_600_000),
  /**
   * A job's lock, renewed every half of it, and the interval of the stalled-job check (bull's
   * default, 30 s both): the jobs of a worker that died run again on another within about two to
   * three of these. At least 1 s: a worker whose event loop stops for longer than the lock loses
   * its jobs to another worker (a stall each; the jobs' writes are idempotent).
   */
  TRAY_JOB_LOCK_MS: wholeNumber('expected a whole number from 1000 to 600000', 1_000, 600_000).default(
    30_000,
  ),
  /**
   * Milliseconds between two rounds of the snooze wake-up that every tray process runs: a snoozed
   * record is back on its user's streams within about this much of its end, so no more than
   * MAX_WAKE_INTERVAL_MS (the contract asks 1 s); no less than 50: each round is a query, and every
   * process runs them, so 1 ms would be hundreds a second per process for nothing a user sees.
   */
  TRAY_WAKE_INTERVAL_MS: wholeNumber(
    `expected a whole number from 50 to ${MAX_WAKE_INTERVAL_MS} (a snooze is back on its streams within 1 s of its end; each round is a query of every tray process)`,
    50,
    MAX_WAKE_INTERVAL_MS,
  ).default(250),
  /** Recipients per read-compute-write round of a post fan-out (bounds memory and command size). */
  TRAY_FANOUT_BATCH: positiveInt(10_000, 100_000),
};

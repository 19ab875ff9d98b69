import { positiveInt } from './env-types.ts';

/** Variables of the tray service's queue consumer, events store, tray records. */
export const trayWorkerShape = {
  /**
   * Jobs one worker process handles at once; records stay correct at any value (compare-and-set).
   * A job mostly waits on database round trips: on the embedded default 8 carried about 1.7x the
   * comments of 4, and 16 another 1.1-1.2x (BENCHMARKS.md, "Tray worker").
   */
  TRAY_WORKER_CONCURRENCY: positiveInt(16, 256),
  /** Days a stored event is kept after it was received. */
  EVENTS_RETENTION_DAYS: positiveInt(30, 3650),
  /** Days a tray record is kept after its lastUpdate (docs/contract.md#tray-records: 90). */
  TRAY_RETENTION_DAYS: positiveInt(90, 3650),
  /** Milliseconds between purges of expired records and events (servers without TTL indexes need them). */
  TRAY_PURGE_INTERVAL_MS: positiveInt(3_600_000, 7 * 24 * 3_600_000),
  /** Recipients per read-compute-write round of a post fan-out (bounds memory and command size). */
  TRAY_FANOUT_BATCH: positiveInt(10_000, 100_000),
};

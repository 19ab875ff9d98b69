import { identifier, onOff, positiveInt } from './env-types.ts';

/** STREAMS_PER_INSTANCE when unset. */
export const DEFAULT_STREAMS_PER_INSTANCE = 20_000;

/** Variables of the live tray (docs/live-tray.md). */
export const trayStreamShape = {
  /** Open live streams per user, across every API instance; the next takes the oldest one's place. */
  STREAMS_PER_USER: positiveInt(5, 100),
  /**
   * Open live streams one API instance holds at most; the next is refused with 503 and Retry-After
   * (a client retries, a load balancer may send it elsewhere). Each costs 15-26 kB and a file
   * descriptor (BENCHMARKS.md, "Live tray"). At most 100,000 (2.6 GB of streams; each heartbeat's
   * lease renewals of that many took 1.2-1.4 s): more streams take more instances.
   */
  STREAMS_PER_INSTANCE: positiveInt(DEFAULT_STREAMS_PER_INSTANCE, 100_000),
  /** Prefix of the live tray's Redis keys and pub/sub channels (changes, tickets, stream slots). */
  STREAM_REDIS_PREFIX: identifier('tray-live'),
  /** The demo page at /demo; `npm start` turns it on. */
  TRAY_DEMO: onOff('off'),
};

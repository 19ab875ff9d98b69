import { identifier, onOff, positiveInt } from './env-types.ts';

/** Variables of the live tray (docs/live-tray.md). */
export const trayStreamShape = {
  /** Open live streams per user, across every API instance; the next takes the oldest one's place. */
  STREAMS_PER_USER: positiveInt(5, 100),
  /** Prefix of the live tray's Redis keys and pub/sub channels (changes, tickets, stream slots). */
  STREAM_REDIS_PREFIX: identifier('tray-live'),
  /** The demo page at /demo; `npm start` turns it on. */
  TRAY_DEMO: onOff('off'),
};

import { identifier, intInRange } from './env-types.ts';

/** Variables of global bans, read by both the worker (publishes) and the API (caches). */
export const trayBanShape = {
  /** Prefix of the Redis keys holding the published banned set; the same on every instance. */
  BAN_REDIS_PREFIX: identifier('tray-bans'),
  /**
   * Milliseconds between an API instance's checks for ban changes: the most a stored ban or
   * unban can go unseen by that instance. Capped so a ban always takes effect within 2 seconds.
   */
  BAN_REFRESH_MS: intInRange(500, 100, 1_500),
};

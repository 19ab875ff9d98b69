import { DAY_MS } from '../../../../shared/time/durations.ts';
import type { TrayRecord } from '../../../../tray-service/domain/tray-record.ts';

/** Platform time of the cases' actions: a whole minute two days ago (dense bursts fit in one minute). */
export const T = Math.floor(Date.now() / 60_000) * 60_000 - 2 * DAY_MS;
/** The tray's clock in the cases: a day after the actions. */
export const NOW = T + DAY_MS;
export const MINUTE = 60_000;

/** `minute` minutes after T, plus `ms`. */
export const at = (minute: number, ms = 0) => T + minute * MINUTE + ms;

export const keysOf = (records: readonly Pick<TrayRecord, 'key'>[]) => records.map((record) => record.key);
export const actorIdsOf = (record: Pick<TrayRecord, 'actors'> | undefined) =>
  record?.actors.map((actor) => actor.userId);

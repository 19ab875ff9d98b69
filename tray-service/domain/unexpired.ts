import { DAY_MS } from '../../shared/time/durations.ts';
import type { TrayRecord } from './tray-record.ts';

/**
 * Whether a record is still shown at `now`: it expires `retentionDays` after its lastUpdate
 * (docs/tray-engine.md#retention). An expired record is never returned, counted or told to a live
 * stream, even before the purge deletes it. Pure.
 */
export function unexpired(
  record: Pick<TrayRecord, 'lastUpdate'>,
  retentionDays: number,
  now: number,
): boolean {
  return record.lastUpdate + retentionDays * DAY_MS > now;
}

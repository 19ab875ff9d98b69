import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';

/**
 * The time of the action a record's `lastActionId` names: `lastActionAt` when a removal left it
 * older than lastUpdate, else lastUpdate itself (docs/tray-rules.md#inbox). Pure.
 */
export function lastActionTime(record: Pick<TrayRecordDoc, 'lastUpdate' | 'lastActionAt'>): number {
  return record.lastActionAt ?? record.lastUpdate;
}

/** `lastActionAt` as a record stores it: only when the action is older than lastUpdate. Pure. */
export function storedActionTime(at: number, lastUpdate: number): Pick<TrayRecordDoc, 'lastActionAt'> {
  return at === lastUpdate ? {} : { lastActionAt: at };
}

/** `updateFloor` as a record stores it: only when a removal left one. Pure. */
export function storedFloor(floor: number | undefined): Pick<TrayRecordDoc, 'updateFloor'> {
  return floor === undefined || floor <= 0 ? {} : { updateFloor: floor };
}

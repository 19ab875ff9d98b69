import type { Db } from 'mongodb';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { TRAY_MIGRATIONS, TRAY_RECORDS } from '../collections/collection-names.ts';
import { ignoreDuplicates } from '../driver/ignore-duplicates.ts';
import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';

export const EVERY_ACTION_KEPT = 'every-action-kept';

/**
 * Since when this database keeps every counted action (tray_target_actions) with its post, read at
 * open and noted once: the epoch on a database with no record yet, else the time of the first
 * open of a version that keeps them. Earlier versions kept only a community's actions, at most 16
 * an actor, without their post, so a removal cannot compute a record that counts from before then
 * (docs/storage.md#removals).
 */
export async function everyActionKeptSince(db: Db, now = new Date()): Promise<number> {
  const migrations = db.collection<{ _id: string; at: Date }>(TRAY_MIGRATIONS);
  const noted = await migrations.findOne({ _id: EVERY_ACTION_KEPT });
  if (noted) return noted.at.getTime();
  const older = await db.collection<TrayRecordDoc>(TRAY_RECORDS).findOne({}, { projection: { _id: 1 } });
  await ignoreDuplicates(migrations.insertOne({ _id: EVERY_ACTION_KEPT, at: older ? now : new Date(0) }));
  // Another process may have noted it first: its time holds.
  return (await migrations.findOne({ _id: EVERY_ACTION_KEPT }))?.at.getTime() ?? now.getTime();
}

/**
 * Whether a record may count actions kept by no one (older than `keptSince`, or dated up to a
 * day after it: the platform's clock may run ahead of the tray's). Pure.
 */
export function countsUnkeptActions(record: Pick<TrayRecordDoc, 'countFrom'>, keptSince: number): boolean {
  return keptSince > 0 && record.countFrom < keptSince + DAY_MS;
}

import type { AnyBulkWriteOperation, Db } from 'mongodb';
import {
  TRAY_RECORDS,
  TRAY_TARGET_ACTIONS,
  TRAY_TARGET_ACTORS,
  USER_PROFILES,
} from '../collections/collection-names.ts';
import { deletedActor, showsDeleted } from '../../../domain/deleted-user.ts';
import { inBatches } from '../driver/in-batches.ts';
import { casUpdateRecords } from '../compare-and-set/cas-update-records.ts';
import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';
import { renameActor } from './apply-activity.ts';
import type { TargetActionDoc } from '../collections/tray-target-actions-collection.ts';
import type { TargetActorDoc } from '../collections/tray-target-actors-collection.ts';
import type { UserProfileDoc } from '../collections/user-profiles-collection.ts';
import { runOnce } from '../setup/run-once.ts';

export const DELETED_MARK = 'deleted-actor-mark';

/**
 * Deleted users looked for by one read of each collection. On FerretDB a filter on an actor's
 * path is not pushed down (each read is a full scan, whatever its `$in` holds), so one read serves
 * as many users as a query comfortably carries.
 */
const USERS_PER_READ = 10_000;

/**
 * Marks the snapshots deletions rewrote before snapshots carried the `deleted` mark
 * (docs/messages.md#deleted-users), once per database: every deleted user's snapshot in every
 * group, kept action and record becomes deletedActor, as a deletion now writes it, and their own
 * tray is removed again. Each collection is read once for all the deleted users (`$in`) and what
 * it finds is rewritten by `_id`: per user, on FerretDB, each user cost three full scans (hours on
 * a large database with hundreds of deleted users). One pass costs those three scans, so a
 * restart part-way does it again from the start rather than keeping progress; whatever it marked
 * already is left as it is. Profiles have no index by `deleted`: the pass reads them all, at open,
 * before the worker takes jobs. A record it marks is a change (its changedAt moves), as any
 * deletion's rewrite is.
 */
export function migrateDeletedMark(db: Db): Promise<number> {
  return runOnce(db, DELETED_MARK, async () => {
    const deleted = await db
      .collection<UserProfileDoc>(USER_PROFILES)
      .find({ deleted: true }, { projection: { _id: 1 } })
      .toArray();
    const userIds = deleted.map((profile) => profile._id);
    for (let start = 0; start < userIds.length; start += USERS_PER_READ)
      await markDeleted(db, userIds.slice(start, start + USERS_PER_READ));
    return userIds.length;
  });
}

async function markDeleted(db: Db, userIds: readonly string[]): Promise<void> {
  const ids = [...userIds];
  const gone = new Set(userIds);
  const records = db.collection<TrayRecordDoc>(TRAY_RECORDS);
  await records.deleteMany({ userId: { $in: ids } });
  // Their snapshot in every group and kept action first, so records computed later keep it too.
  // Rewritten by `_id`, which FerretDB pushes down, each a single-document updateMany, not an
  // updateOne (UPDATES_PER_BULK, cas-update-records.ts), MAX_BULK_OPERATIONS to a bulk.
  const actors = db.collection<TargetActorDoc>(TRAY_TARGET_ACTORS);
  await inBatches(actors.find({ 'actor.userId': { $in: ids } }), async (docs) => {
    const ops = docs
      .filter((doc) => !showsDeleted(doc.actor))
      .map((doc): AnyBulkWriteOperation<TargetActorDoc> => ({
        updateMany: { filter: { _id: doc._id }, update: { $set: { actor: deletedActor(doc.actor.userId) } } },
      }));
    if (ops.length > 0) await actors.bulkWrite(ops, { ordered: false });
  });
  const kept = db.collection<TargetActionDoc>(TRAY_TARGET_ACTIONS);
  await inBatches(kept.find({ 'activity.actor.userId': { $in: ids } }), async (docs) => {
    const ops = docs
      .filter((doc) => !showsDeleted(doc.activity.actor))
      .map((doc): AnyBulkWriteOperation<TargetActionDoc> => ({
        updateMany: {
          filter: { _id: doc._id },
          update: { $set: { 'activity.actor': deletedActor(doc.activity.actor.userId) } },
        },
      }));
    if (ops.length > 0) await kept.bulkWrite(ops, { ordered: false });
  });
  // Expired records are marked too (none keeps the old snapshot).
  await inBatches(records.find({ 'actors.userId': { $in: ids } }), async (docs) => {
    await casUpdateRecords(
      db,
      docs.map((doc) => doc._id),
      (_key, current) => (current ? markActors(current, gone) : 'unchanged'),
      { owner: `migration:${DELETED_MARK}`, first: new Map(docs.map((doc) => [doc._id, doc])) },
    );
  });
}

/** The record with each of its deleted actors as deletedActor (renameActor, one after the other). */
function markActors(record: TrayRecordDoc, gone: ReadonlySet<string>): TrayRecordDoc | 'unchanged' {
  let next: TrayRecordDoc | 'unchanged' = 'unchanged';
  for (const actor of record.actors) {
    if (!gone.has(actor.userId)) continue;
    const renamed = renameActor(next === 'unchanged' ? record : next, deletedActor(actor.userId));
    // renameActor moves the version once per call; the record is written once.
    if (renamed !== 'unchanged') next = { ...renamed, version: record.version + 1 };
  }
  return next;
}

import type { Db } from 'mongodb';
import { TRAY_MIGRATIONS, USER_PROFILES } from '../collection-names.ts';
import { ignoreDuplicates } from '../compare-and-set/ignore-duplicates.ts';
import { forgetDeletedUsers } from './apply-profile-changes.ts';
import type { UserProfileDoc } from './user-profiles-collection.ts';

const DELETED_MARK = 'deleted-actor-mark';

/**
 * Marks the snapshots deletions rewrote before snapshots carried the `deleted` mark
 * (docs/messages.md#deleted-users), once per database: each deleted profile's deletion is applied
 * again (forgetDeletedUsers, idempotent), which now writes the marked snapshot in every group, kept
 * action and record. Profiles have no index by `deleted`: this one pass reads them all, at open,
 * before the worker takes jobs. A record it marks is a change (its changedAt moves), as any
 * deletion's rewrite is; a record already marked is left as it is.
 */
export async function migrateDeletedMark(db: Db): Promise<number> {
  const migrations = db.collection<{ _id: string; at: Date }>(TRAY_MIGRATIONS);
  if (await migrations.findOne({ _id: DELETED_MARK })) return 0;
  const deleted = await db
    .collection<UserProfileDoc>(USER_PROFILES)
    .find({ deleted: true }, { projection: { _id: 1 } })
    .toArray();
  const userIds = deleted.map((profile) => profile._id);
  if (userIds.length > 0) await forgetDeletedUsers(db, userIds, { owner: `migration:${DELETED_MARK}` });
  await ignoreDuplicates(migrations.insertOne({ _id: DELETED_MARK, at: new Date() }));
  return userIds.length;
}

import type { AnyBulkWriteOperation, Db } from 'mongodb';
import { TRAY_RECORDS, USER_PROFILES } from '../collections/collection-names.ts';
import { forgetKeptState } from './deleted-users.ts';
import { type TrayRecordDoc } from '../collections/tray-records-collection.ts';
import type { ProfileChange } from '../../../domain/activity.ts';
import { deletedActor } from '../../../domain/deleted-user.ts';
import { renameActor } from './apply-activity.ts';
import { casUpdateRecords, UPDATES_PER_BULK } from '../compare-and-set/cas-update-records.ts';
import { ignoreDuplicates } from '../driver/ignore-duplicates.ts';
import { inBatches } from '../driver/in-batches.ts';
import { renameKeptActor } from './target-actions.ts';
import { renameGroupActor } from './target-actors.ts';
import { endMemberships } from '../memberships/membership-changes.ts';
import type { UserProfileDoc } from '../collections/user-profiles-collection.ts';

/**
 * Keeps user_profiles current (docs/contract.md#userdidupdate-userdiddelete). A rename changes no
 * stored record: names are snapshots taken when each actor acted. A delete rewrites the user's
 * snapshots in every record to `Deleted user`, marked deleted (deletedActor; FerretDB has no
 * positional `$` update, so records are rewritten with compare-and-set), removes the deleted user's
 * own tray, mutes and last-read times, and ends their memberships. A deletion is final
 * (docs/tray-rules.md#deleted-users): it replaces any stored profile, and nothing replaces it.
 */
export interface ProfileChangeOptions {
  /** The job's dedupe key (owner of its write claims). */
  owner: string;
  /** The tray's clock (epoch ms): changedAt of the renamed records. Default: the process clock. */
  now?: () => number;
  /** Told of every record renamed, expired ones included (live streams). */
  onWritten?: (records: readonly TrayRecordDoc[]) => Promise<void>;
}

export async function applyProfileChanges(
  db: Db,
  changes: readonly ProfileChange[],
  options: ProfileChangeOptions,
): Promise<void> {
  if (changes.length === 0) return;
  // A filter that does not match a stored profile makes the upsert insert a duplicate `_id`: ignored.
  const ops: AnyBulkWriteOperation<UserProfileDoc>[] = changes.map((change) => ({
    updateMany: {
      filter: change.deleted
        ? { _id: change.userId, deleted: { $ne: true } }
        : { _id: change.userId, updatedAt: { $lt: change.at }, deleted: { $ne: true } },
      update: profileUpdate(change),
      upsert: true,
    },
  }));
  // Single-document updateMany, not updateOne: see UPDATES_PER_BULK (cas-update-records.ts).
  for (let start = 0; start < ops.length; start += UPDATES_PER_BULK) {
    await ignoreDuplicates(
      db
        .collection<UserProfileDoc>(USER_PROFILES)
        .bulkWrite(ops.slice(start, start + UPDATES_PER_BULK), { ordered: false }),
    );
  }
  const deleted = changes.filter((change) => change.deleted);
  if (deleted.length === 0) return;
  const userIds = [...new Set(deleted.map((change) => change.userId))];
  // The profile first, then the memberships, then the tray and the snapshots: a write that reads
  // the profile or its members' changes after its own writes then either finds the deletion and
  // applies it again itself (reapply-deletions.ts), or wrote before this reads what it rewrites.
  await endMemberships(
    db,
    userIds,
    Math.max(...deleted.map((change) => change.at)),
    options.now?.() ?? Date.now(),
  );
  // What they kept for themselves goes with their tray (docs/tray-rules.md#deleted-users), here
  // only: only their own calls store it, and those check the profile after they write.
  await forgetKeptState(db, userIds);
  await forgetDeletedUsers(db, userIds, options);
}

/** Sets the new profile; an image the new profile lacks is removed, not kept from the old one. */
function profileUpdate(change: ProfileChange) {
  const $set: Partial<UserProfileDoc> = {
    displayName: change.displayName,
    deleted: change.deleted,
    updatedAt: change.at,
  };
  const $unset: Partial<Record<'imageUrl' | 'avatarCustomUrl', ''>> = {};
  if (change.imageUrl) $set.imageUrl = change.imageUrl;
  else $unset.imageUrl = '';
  if (change.avatarCustomUrl) $set.avatarCustomUrl = change.avatarCustomUrl;
  else $unset.avatarCustomUrl = '';
  return Object.keys($unset).length > 0 ? { $set, $unset } : { $set };
}

/**
 * Removes the deleted users' own trays and rewrites their snapshot to deletedActor in every
 * group, kept action and record; idempotent, so a write that finds a user deleted after it wrote
 * runs it again for them (reapply-deletions.ts). What they kept for themselves (mutes, last-read
 * times) is the deletion's to forget, not this: a write running it again must leave what the port
 * stored for them since, as PostgreSQL does.
 */
export async function forgetDeletedUsers(
  db: Db,
  userIds: readonly string[],
  { owner, now, onWritten }: ProfileChangeOptions,
): Promise<void> {
  const records = db.collection<TrayRecordDoc>(TRAY_RECORDS);
  for (const userId of userIds) {
    await records.deleteMany({ userId });
    // Their snapshot in every group and kept action first, so records computed later keep the new
    // name too.
    const as = deletedActor(userId);
    await renameGroupActor(db, as);
    await renameKeptActor(db, as);
    // Expired records are renamed too (none keeps the name), and told like the others: which of
    // them live streams hear of is the caller's to decide.
    // A batch at a time: a user who posted in a large community is named in a record of each member.
    await inBatches(records.find({ 'actors.userId': userId }), async (touched) => {
      await casUpdateRecords(
        db,
        touched.map((doc) => doc._id),
        (_key, current) => (current ? renameActor(current, as) : 'unchanged'),
        {
          owner,
          first: new Map(touched.map((doc) => [doc._id, doc])),
          ...(now ? { now } : {}),
          ...(onWritten ? { onWritten } : {}),
        },
      );
    });
  }
}

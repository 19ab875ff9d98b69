import type { AnyBulkWriteOperation, Db } from 'mongodb';
import { MEMBERSHIPS, membershipId, type MembershipDoc } from '../../shared/tray/tray-record.ts';
import type { MembershipChange } from '../worker/activity.ts';
import { UPDATES_PER_BULK } from './cas-update-records.ts';
import { ignoreDuplicates } from './ignore-duplicates.ts';
import { WHOLE_GROUP } from './read-by-ids.ts';

/**
 * Applies joins and leaves (docs/contract.md#communitydidjoin-communitydidleave) in bulk. The filter
 * `updatedAt < at` makes an older join/leave delivered after a newer one a no-op: it matches
 * nothing, its upsert then collides with the existing _id, and that duplicate-key error is the
 * expected "a newer change exists" answer. A join sets `since`, so posts created while the user
 * was away are never added (nothing retroactive).
 */
export async function applyMembershipChanges(db: Db, changes: readonly MembershipChange[]): Promise<void> {
  if (changes.length === 0) return;
  const ops: AnyBulkWriteOperation<MembershipDoc>[] = changes.map((change) => ({
    updateMany: {
      filter: { _id: membershipId(change.communityId, change.userId), updatedAt: { $lt: change.at } },
      update: change.active
        ? {
            $set: {
              communityId: change.communityId,
              userId: change.userId,
              active: true,
              since: change.at,
              updatedAt: change.at,
            },
          }
        : {
            $set: {
              communityId: change.communityId,
              userId: change.userId,
              active: false,
              updatedAt: change.at,
            },
            $setOnInsert: { since: change.at },
          },
      upsert: true,
    },
  }));
  // Single-document updateMany, not updateOne: see UPDATES_PER_BULK (cas-update-records.ts).
  for (let start = 0; start < ops.length; start += UPDATES_PER_BULK) {
    await ignoreDuplicates(
      db
        .collection<MembershipDoc>(MEMBERSHIPS)
        .bulkWrite(ops.slice(start, start + UPDATES_PER_BULK), { ordered: false }),
    );
  }
}

/**
 * Members a community post reaches: active, and joined no later than the post was created. The
 * community's memberships are read by equality on communityId (one index lookup on FerretDB,
 * which does not push ranges down) and the rest is decided here.
 */
export async function postRecipients(db: Db, communityId: string, createdAt: number): Promise<string[]> {
  const members = await db
    .collection<MembershipDoc>(MEMBERSHIPS)
    .find({ communityId }, { projection: { _id: 0, userId: 1, active: 1, since: 1 }, batchSize: WHOLE_GROUP })
    .toArray();
  return members
    .filter((member) => member.active && member.since <= createdAt)
    .map((member) => member.userId);
}

/** A deleted user's memberships end, so post fan-outs stop creating records for them. */
export async function endMemberships(db: Db, userIds: readonly string[], at: number): Promise<void> {
  for (const userId of userIds) {
    await db
      .collection<MembershipDoc>(MEMBERSHIPS)
      .updateMany({ userId, updatedAt: { $lt: at } }, { $set: { active: false, updatedAt: at } });
  }
}

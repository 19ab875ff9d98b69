import { MongoBulkWriteError, type AnyBulkWriteOperation, type Db, type FindCursor } from 'mongodb';
import { MEMBERSHIPS, membershipId, type MembershipDoc } from '../../shared/tray/tray-record.ts';
import type { MembershipChange } from '../worker/activity.ts';

const DUPLICATE_KEY = 11000;

/**
 * Applies joins and leaves (platform document 2.3.6) in one unordered bulkWrite. The filter
 * `updatedAt < at` makes an older join/leave delivered after a newer one a no-op: it matches
 * nothing, its upsert then collides with the existing _id, and that duplicate-key error is the
 * expected "a newer change exists" answer. A join sets `since`, so posts created while the user
 * was away are never added (nothing retroactive).
 */
export async function applyMembershipChanges(db: Db, changes: readonly MembershipChange[]): Promise<void> {
  if (changes.length === 0) return;
  const ops: AnyBulkWriteOperation<MembershipDoc>[] = changes.map((change) => ({
    updateOne: {
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
  try {
    await db.collection<MembershipDoc>(MEMBERSHIPS).bulkWrite(ops, { ordered: false });
  } catch (error) {
    if (!(error instanceof MongoBulkWriteError)) throw error;
    const writeErrors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
    if (error.err || writeErrors.some((w) => w.code !== DUPLICATE_KEY)) throw error;
  }
}

/**
 * Members a community post reaches: active, and joined no later than the post was created.
 * Read in large batches so a 10,000-member fan-out costs one or two commands.
 */
export function postRecipients(
  db: Db,
  communityId: string,
  createdAt: number,
  batchSize: number,
): FindCursor<Pick<MembershipDoc, 'userId'>> {
  return db
    .collection<MembershipDoc>(MEMBERSHIPS)
    .find(
      { communityId, active: true, since: { $lte: createdAt } },
      { projection: { _id: 0, userId: 1 }, batchSize },
    )
    .map((doc) => ({ userId: doc.userId }));
}

/** A deleted user's memberships end, so post fan-outs stop creating records for them. */
export async function endMemberships(db: Db, userIds: readonly string[], at: number): Promise<void> {
  if (userIds.length === 0) return;
  await db
    .collection<MembershipDoc>(MEMBERSHIPS)
    .updateMany(
      { userId: { $in: [...userIds] }, updatedAt: { $lt: at } },
      { $set: { active: false, updatedAt: at } },
    );
}

import type { AnyBulkWriteOperation, Db } from 'mongodb';
import { UPDATES_PER_BULK } from './cas-update-records.ts';
import { ignoreDuplicates } from './ignore-duplicates.ts';
import { banRank, type BanChange } from '../bans/ban-change.ts';

export const USER_BANS = 'user_bans';

/** user_bans: the latest global ban or unban of each user ever banned (the durable record). */
export interface UserBanDoc {
  /** The user id. */
  _id: string;
  banned: boolean;
  /** Epoch ms of the change on the platform (the event's createdAt). */
  changedAt: number;
  /** banRank(banned, changedAt): the one field the compare in applyBanChanges reads. */
  rank: number;
}

/**
 * Stores ban changes, newest `createdAt` wins whatever the arrival order. FerretDB's updates are
 * not atomic under concurrency, so there is no read-modify-write: the filter `rank < new rank`
 * matches only an older state; when a newer (or the same) change is stored it matches nothing,
 * the upsert then collides with the existing _id, and that duplicate key is the expected
 * "already newer" answer. A redelivery is therefore a no-op.
 */
export async function applyBanChanges(db: Db, changes: readonly BanChange[]): Promise<void> {
  if (changes.length === 0) return;
  const ops: AnyBulkWriteOperation<UserBanDoc>[] = changes.map((change) => {
    const rank = banRank(change);
    return {
      updateMany: {
        filter: { _id: change.userId, rank: { $lt: rank } },
        update: { $set: { banned: change.banned, changedAt: change.at, rank } },
        upsert: true,
      },
    };
  });
  // Single-document updateMany, not updateOne: see UPDATES_PER_BULK (cas-update-records.ts).
  for (let start = 0; start < ops.length; start += UPDATES_PER_BULK) {
    await ignoreDuplicates(
      db
        .collection<UserBanDoc>(USER_BANS)
        .bulkWrite(ops.slice(start, start + UPDATES_PER_BULK), { ordered: false }),
    );
  }
}

/** Every stored ban state, to publish again when Redis lost what was published (start-up). */
export async function storedBanChanges(db: Db): Promise<BanChange[]> {
  const docs = await db.collection<UserBanDoc>(USER_BANS).find({}).toArray();
  return docs.map((doc) => ({ userId: doc._id, banned: doc.banned, at: doc.changedAt }));
}

import { MongoBulkWriteError, type AnyBulkWriteOperation, type Db } from 'mongodb';
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

const DUPLICATE_KEY = 11000;

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
      updateOne: {
        filter: { _id: change.userId, rank: { $lt: rank } },
        update: { $set: { banned: change.banned, changedAt: change.at, rank } },
        upsert: true,
      },
    };
  });
  try {
    await db.collection<UserBanDoc>(USER_BANS).bulkWrite(ops, { ordered: false });
  } catch (error) {
    if (!(error instanceof MongoBulkWriteError)) throw error;
    const writeErrors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
    if (error.err || writeErrors.some((w) => w.code !== DUPLICATE_KEY)) throw error;
  }
}

/** Every stored ban state, to publish again when Redis lost what was published (start-up). */
export async function storedBanChanges(db: Db): Promise<BanChange[]> {
  const docs = await db.collection<UserBanDoc>(USER_BANS).find({}).toArray();
  return docs.map((doc) => ({ userId: doc._id, banned: doc.banned, at: doc.changedAt }));
}

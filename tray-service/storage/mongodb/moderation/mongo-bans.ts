import type { Db } from 'mongodb';
import { banRank, type BanChange } from '../../../domain/ban-change.ts';
import type { BansPort } from '../../port.ts';
import { type UserBanChangeDoc } from '../collections/user-bans-collection.ts';
import { USER_BAN_CHANGES } from '../collections/collection-names.ts';
import { ignoreDuplicates } from '../driver/ignore-duplicates.ts';

const changeId = (userId: string, rank: number) => JSON.stringify([userId, rank]);

/**
 * Stores ban changes so that the newest `createdAt` wins whatever the arrival order. FerretDB's
 * updates are not atomic under concurrency (two conditional upserts can both pass their filter,
 * and the later write wins even when it is older), so the state is never updated in place: each
 * change is an insert with a unique `_id`, the one write FerretDB performs atomically, and the
 * state is the change with the highest rank. A redelivery collides on `_id` and changes nothing.
 * Deleting the entries ranked below a stored change is always safe, since the newest is never
 * among them; it keeps the collection at about one document per user (an older change that
 * arrives late stays until the next newer one prunes it, and never counts).
 */
export async function applyBanChanges(db: Db, changes: readonly BanChange[]): Promise<void> {
  if (changes.length === 0) return;
  const collection = db.collection<UserBanChangeDoc>(USER_BAN_CHANGES);
  const docs = changes.map((change): UserBanChangeDoc => {
    const rank = banRank(change);
    return {
      _id: changeId(change.userId, rank),
      userId: change.userId,
      banned: change.banned,
      changedAt: change.at,
      rank,
    };
  });
  await ignoreDuplicates(collection.insertMany(docs, { ordered: false }));
  for (const doc of docs) await collection.deleteMany({ userId: doc.userId, rank: { $lt: doc.rank } });
}

/** The storage port's global bans on MongoDB: insert-only change documents (applyBanChanges). */
export function createMongoBans(db: Db): BansPort {
  return {
    apply: (changes) => applyBanChanges(db, changes),
    all: () => storedBanChanges(db),
  };
}

/** Each user's newest stored change: their ban state, to publish again at start-up. */
export async function storedBanChanges(db: Db): Promise<BanChange[]> {
  const docs = await db.collection<UserBanChangeDoc>(USER_BAN_CHANGES).find({}).toArray();
  return newestPerUser(docs.map((doc) => ({ userId: doc.userId, banned: doc.banned, at: doc.changedAt })));
}

/** The highest-ranked change of each user (pure). */
export function newestPerUser(changes: readonly BanChange[]): BanChange[] {
  const newest = new Map<string, BanChange>();
  for (const change of changes) {
    const held = newest.get(change.userId);
    if (!held || banRank(change) > banRank(held)) newest.set(change.userId, change);
  }
  return [...newest.values()];
}

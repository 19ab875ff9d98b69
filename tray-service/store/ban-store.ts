import type { Db } from 'mongodb';
import { banRank, type BanChange } from '../bans/ban-change.ts';
import { ignoreDuplicates } from './ignore-duplicates.ts';

export const USER_BANS = 'user_bans';

/** user_bans: the global ban changes of each user ever banned, the newest kept (the durable record). */
export interface UserBanDoc {
  /** JSON [user id, rank]: a redelivered change inserts nothing. */
  _id: string;
  userId: string;
  banned: boolean;
  /** Epoch ms of the change on the platform (the event's createdAt). */
  changedAt: number;
  /** banRank(banned, changedAt): the highest rank is the user's state. */
  rank: number;
}

/**
 * Stores ban changes, newest `createdAt` wins whatever the arrival order. Insert-only plus a
 * prune of lower ranks, because FerretDB's updates are not atomic under concurrency: two
 * concurrent compare-and-update writes can both match and the older land last. An insert is
 * atomic, and the prune never deletes the highest rank, whatever the interleaving.
 */
export async function applyBanChanges(db: Db, changes: readonly BanChange[]): Promise<void> {
  const bans = db.collection<UserBanDoc>(USER_BANS);
  for (const change of changes) {
    const rank = banRank(change);
    await ignoreDuplicates(
      bans.insertOne({
        _id: JSON.stringify([change.userId, rank]),
        userId: change.userId,
        banned: change.banned,
        changedAt: change.at,
        rank,
      }),
    );
    await bans.deleteMany({ userId: change.userId, rank: { $lt: rank } });
  }
}

/** The newest stored change of each user (documents a prune has not reached yet are older). */
function newestPerUser(docs: readonly UserBanDoc[]): BanChange[] {
  const newest = new Map<string, UserBanDoc>();
  for (const doc of docs) {
    const seen = newest.get(doc.userId);
    if (!seen || doc.rank > seen.rank) newest.set(doc.userId, doc);
  }
  return [...newest.values()].map((doc) => ({ userId: doc.userId, banned: doc.banned, at: doc.changedAt }));
}

/** A user's ban state as stored, or undefined when they were never banned. */
export async function storedBanOf(db: Db, userId: string): Promise<BanChange | undefined> {
  const [state] = newestPerUser(await db.collection<UserBanDoc>(USER_BANS).find({ userId }).toArray());
  return state;
}

/** Every stored ban state, to publish again when Redis lost what was published (start-up). */
export async function storedBanChanges(db: Db): Promise<BanChange[]> {
  return newestPerUser(await db.collection<UserBanDoc>(USER_BANS).find({}).toArray());
}

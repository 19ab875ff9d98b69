import type { Db, Filter } from 'mongodb';
import type { DeletedUsersPort } from '../../port.ts';
import { TRAY_MUTES, TRAY_READ_STATE, USER_PROFILES } from '../collections/collection-names.ts';
import type { UserProfileDoc } from '../collections/user-profiles-collection.ts';

/** Users per `$in`: a fan-out's batch of members in one query or a few. */
const IDS_PER_QUERY = 1_000;

/**
 * Which of `userIds` have a deleted stored profile (docs/tray-rules.md#deleted-users): such a user
 * receives nothing, and their actions show them as `Deleted user`. One query on the `_id` index per
 * batch of a write's recipients and actors (a thousand at most): an equality for one user, which
 * FerretDB pushes down, an `$in` for more, which FerretDB filters in Go over the collection (its
 * limit, as for the mutes: docs/storage.md).
 */
export async function deletedAmong(db: Db, userIds: Iterable<string>): Promise<Set<string>> {
  const ids = [...new Set(userIds)];
  const deleted = new Set<string>();
  for (let start = 0; start < ids.length; start += IDS_PER_QUERY) {
    const wanted = ids.slice(start, start + IDS_PER_QUERY);
    const filter: Filter<UserProfileDoc> =
      wanted.length === 1 ? { _id: wanted[0], deleted: true } : { _id: { $in: wanted }, deleted: true };
    const found = await db
      .collection<UserProfileDoc>(USER_PROFILES)
      .find(filter, { projection: { _id: 1 }, batchSize: wanted.length })
      .toArray();
    for (const doc of found) deleted.add(doc._id);
  }
  return deleted;
}

/**
 * Removes what the users kept for themselves (docs/tray-rules.md#deleted-users): their mutes
 * (ended spans too) and last-read times, one statement a collection (an equality for one user,
 * which FerretDB pushes down); others' mutes of them are the others'. The deletion calls it after
 * storing the profile (apply-profile-changes.ts), as DeletedUsersPort requires.
 */
export async function forgetKeptState(db: Db, userIds: readonly string[]): Promise<void> {
  if (userIds.length === 0) return;
  const filter = userIds.length === 1 ? { userId: userIds[0] } : { userId: { $in: [...userIds] } };
  for (const collection of [TRAY_MUTES, TRAY_READ_STATE]) await db.collection(collection).deleteMany(filter);
}

/** Deleted users as user_profiles marks them. */
export function createMongoDeletedUsers(db: Db): DeletedUsersPort {
  return {
    isDeleted: async (userId) => (await deletedAmong(db, [userId])).has(userId),
    forgetKept: (userIds) => forgetKeptState(db, userIds),
  };
}

import type { Db, Filter } from 'mongodb';
import { USER_PROFILES } from '../collection-names.ts';
import type { UserProfileDoc } from './user-profiles-collection.ts';

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

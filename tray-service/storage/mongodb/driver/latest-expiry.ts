import type { Db, Document, Filter } from 'mongodb';
import { WHOLE_GROUP } from './whole-group.ts';

/**
 * The latest `expiresAt` among the documents of `name` that `filter` matches; undefined when none
 * does. The filter leads with an equality (a group, a post, a user), and the latest is taken here:
 * no index orders those documents by expiry, and a sort on `expiresAt` would either sort in memory
 * or walk the whole `expiry` index. How long what the purge keeps for them must stay.
 */
export async function latestExpiry(
  db: Db,
  name: string,
  filter: Filter<Document>,
): Promise<Date | undefined> {
  const found = await db
    .collection(name)
    .find<{ expiresAt: Date }>(filter, { projection: { _id: 0, expiresAt: 1 }, batchSize: WHOLE_GROUP })
    .toArray();
  let latest: Date | undefined;
  for (const { expiresAt } of found) if (!latest || expiresAt > latest) latest = expiresAt;
  return latest;
}

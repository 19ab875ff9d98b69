import type { Db, Filter } from 'mongodb';
import { HOUR_MS } from '../../../../shared/time/durations.ts';
import type { InboxCountPair } from '../../port.ts';
import { TRAY_READ_STATE, TRAY_RECORDS } from '../collections/collection-names.ts';
import type { ReadStateDoc } from '../collections/tray-read-state-collection.ts';
import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';

/** Users counted by one set of commands: each `$in` and `$or` stays a bounded command. */
const USERS_PER_QUERY = 500;

/**
 * A match on `userId` of these users: one user as an equality, which FerretDB pushes down to its
 * backend (an `$in` it filters in Go over the whole collection); MongoDB uses the index either way.
 */
function oneOrIn(userIds: readonly string[]) {
  const [only] = userIds;
  return only !== undefined && userIds.length === 1 ? only : { $in: [...userIds] };
}

/** Each user's latest last-read time (0: never), by one `$in` on `api_read_state_user`. */
export async function lastReadTimes(db: Db, userIds: readonly string[]): Promise<Map<string, number>> {
  const times = new Map(userIds.map((userId) => [userId, 0]));
  // The prune after each last-read leaves a user one document, or a few while calls race: the
  // largest is the user's time, as createMongoLatestTimes reads it.
  const docs = await db
    .collection<ReadStateDoc>(TRAY_READ_STATE)
    .find({ userId: oneOrIn(userIds) }, { projection: { _id: 0, userId: 1, lastReadAt: 1 } })
    .toArray();
  for (const { userId, lastReadAt } of docs)
    if (typeof lastReadAt === 'number' && lastReadAt > (times.get(userId) ?? 0))
      times.set(userId, lastReadAt);
  return times;
}

/**
 * Matching records per user: `$match` then `$group` by user with `$sum: 1`, the one accumulator
 * FerretDB 1.24 has beside `$count`. The group needs only `userId`, a key of the index the match
 * runs on, so MongoDB counts from the index alone, as countDocuments does for one user.
 */
async function countPerUser(db: Db, filter: Filter<TrayRecordDoc>): Promise<Map<string, number>> {
  const rows = await db
    .collection<TrayRecordDoc>(TRAY_RECORDS)
    .aggregate<{ _id: string; n: number }>([
      { $match: filter },
      { $group: { _id: '$userId', n: { $sum: 1 } } },
    ])
    .toArray();
  return new Map(rows.map((row) => [row._id, row.n]));
}

/**
 * The unread and the unseen filters of each user (countUnread's and countUnseen's with the recorded
 * last-read time): one `$or` clause per distinct last-read time, the users who share it in one
 * `$in` (everyone who never read shares 0), each clause the one-user filter on its index
 * (`box_unread`, `box_unseen_since`).
 */
async function countClauses(db: Db, userIds: readonly string[], now: number) {
  const bySince = new Map<number, string[]>();
  for (const [userId, since] of await lastReadTimes(db, userIds))
    bySince.set(since, [...(bySince.get(since) ?? []), userId]);
  const clauses = (flag: 'hasRead' | 'isSeen') =>
    [...bySince].map(([since, users]): Filter<TrayRecordDoc> => ({
      userId: oneOrIn(users),
      [flag]: false,
      box: 'inbox',
      unreadAt: { $gt: since },
      expiresAt: { $gt: new Date(now) },
    }));
  return { unread: clauses('hasRead'), unseen: clauses('isSeen') };
}

/**
 * How far ahead the first expiry of what the counts counted is looked for. FerretDB has no `$min`
 * (nor `$first`) accumulator, and a sort by expiry across the `$or` would be a sort in memory of
 * every counted record: the records counted that expire within this window are read instead (by the
 * counts' own indexes, a few per user), and a user with none there is named the window's end, when
 * the streams count again (counts that did not change are not sent).
 */
const EXPIRY_LOOKAHEAD_MS = HOUR_MS;

/** The first expiry in the window of the records `clauses` match, per user. */
async function firstExpiries(
  db: Db,
  clauses: readonly Filter<TrayRecordDoc>[],
  now: number,
): Promise<Map<string, number>> {
  const window = { $gt: new Date(now), $lte: new Date(now + EXPIRY_LOOKAHEAD_MS) };
  const docs = await db
    .collection<TrayRecordDoc>(TRAY_RECORDS)
    .find(
      { $or: clauses.map((clause) => ({ ...clause, expiresAt: window })) },
      { projection: { _id: 0, userId: 1, expiresAt: 1 } },
    )
    .toArray();
  const first = new Map<string, number>();
  for (const { userId, expiresAt } of docs) {
    const at = expiresAt.getTime();
    if (at < (first.get(userId) ?? Infinity)) first.set(userId, at);
  }
  return first;
}

/**
 * Both inbox counts of many users (InboxPort.countInboxes), the same filters as countUnread and
 * countUnseen with the users in one `$in`: per 500 users, the last-read times and then the unread
 * and the unseen counts and the first expiries (four commands, two round trips one after the
 * other), however many users. On MongoDB each runs on the index of its one-user form. FerretDB,
 * the test server, pushes no `$in` or `$or` down and filters the collection in Go: right there, not
 * fast (docs/storage.md#the-inbox).
 */
export async function countInboxes(
  db: Db,
  userIds: readonly string[],
  now: number,
): Promise<Map<string, InboxCountPair>> {
  const counts = new Map<string, InboxCountPair>();
  const unique = [...new Set(userIds)];
  for (let start = 0; start < unique.length; start += USERS_PER_QUERY) {
    const users = unique.slice(start, start + USERS_PER_QUERY);
    const clauses = await countClauses(db, users, now);
    const [unread, unseen, expiries] = await Promise.all([
      countPerUser(db, { $or: clauses.unread }),
      countPerUser(db, { $or: clauses.unseen }),
      firstExpiries(db, [...clauses.unread, ...clauses.unseen], now),
    ]);
    for (const userId of users) {
      const pair = { unread: unread.get(userId) ?? 0, unseen: unseen.get(userId) ?? 0 };
      const nextExpiry = expiries.get(userId) ?? now + EXPIRY_LOOKAHEAD_MS;
      counts.set(userId, pair.unread + pair.unseen > 0 ? { ...pair, nextExpiry } : pair);
    }
  }
  return counts;
}

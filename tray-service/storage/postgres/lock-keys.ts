import type pg from 'pg';

/** Seeds the lock hashes, so the tray's locks stay apart from other users of advisory locks. */
const LOCK_SEED = 7_240_312;

/**
 * The buckets every key falls in (by its hash): a transaction of many keys locks their buckets
 * instead of each key. A power of two, so a bucket is the hash's low bits.
 */
const LOCK_BUCKETS = 256;

/** Keys of one call in one bucket beyond which it locks the bucket instead of each key. */
const KEYS_PER_BUCKET = 3;

/**
 * The most advisory locks one lockKeys call takes: each bucket with its keys, or the bucket alone.
 * The server's lock table is shared by every transaction (room for about max_locks_per_transaction,
 * 64, per connection): a lock per key ran out of it ('out of shared memory', on every attempt) on
 * a join of 40,000 users. A pool of PG_POOL_SIZE connections holds at most that many times this.
 */
export const MAX_ADVISORY_LOCKS = LOCK_BUCKETS * (1 + KEYS_PER_BUCKET);

/**
 * Takes transaction-level advisory locks on `keys` (record groups, members), exclusive, and on
 * `shared` keys, shared, all in one order every writer follows, so two writers never wait on each
 * other crosswise. Held until commit: a writer that waited then reads (READ COMMITTED: a new
 * snapshot per statement) everything the other committed, so two writes of one record group never
 * compute from each other's missing actors.
 *
 * The locks taken are bounded (MAX_ADVISORY_LOCKS) by two levels: each key's hash falls in one of
 * LOCK_BUCKETS buckets. A bucket holding at most KEYS_PER_BUCKET of the call's keys is locked
 * shared, and each of those keys in its own mode; a bucket holding more is locked alone,
 * exclusive, which covers every key in it in either mode. Two transactions naming one key both
 * lock its bucket: shared beside shared, and then they meet on the key itself exactly as with a
 * lock per key, or exclusive on one side, and then one waits for the other. So every wait a lock
 * per key makes is still made (a few more: keys apart in one bucket one side locks whole), and
 * whatever those locks serialise stays serialised. The order is every bucket, then every key, each
 * by its number: still one order for all writers. A transaction calling this twice (removals) may
 * ask for a bucket it holds shared exclusive, and so deadlock with another doing the same: the
 * server detects it and the transaction is retried whole (in-transaction.ts), as for any second
 * call here out of order.
 */
export async function lockKeys(
  client: pg.PoolClient,
  keys: readonly string[],
  shared: readonly string[] = [],
): Promise<void> {
  const all = [...new Set(keys)];
  const exclusive = new Set(all);
  for (const key of new Set(shared)) if (!exclusive.has(key)) all.push(key);
  if (all.length === 0) return;
  await client.query({
    // Prepared once per connection: every write runs it. Volatile, so evaluated after the sort.
    // Buckets are the two-number form of advisory locks (LOCK_SEED, bucket), keys the one-number
    // form: the server keeps the two apart.
    name: 'tray_lock_keys',
    text: `WITH hashes AS (
             SELECT hashtextextended(k, $3) AS h, bool_and(s) AS only_shared
             FROM unnest($1::text[], $2::boolean[]) AS x(k, s) GROUP BY 1),
           buckets AS (
             SELECT h & $4 AS bucket, count(*) > $5 AS whole FROM hashes GROUP BY 1),
           locks AS (
             SELECT 0 AS level, bucket AS id, NOT whole AS only_shared FROM buckets
             UNION ALL
             SELECT 1, h, only_shared FROM hashes JOIN buckets ON bucket = h & $4 WHERE NOT whole)
           SELECT CASE
                    WHEN level = 0 AND only_shared THEN pg_advisory_xact_lock_shared($3::int, id::int)
                    WHEN level = 0 THEN pg_advisory_xact_lock($3::int, id::int)
                    WHEN only_shared THEN pg_advisory_xact_lock_shared(id)
                    ELSE pg_advisory_xact_lock(id) END
           FROM locks ORDER BY level, id`,
    values: [all, all.map((key) => !exclusive.has(key)), LOCK_SEED, LOCK_BUCKETS - 1, KEYS_PER_BUCKET],
  });
}

/** The lock key of one record group (every recipient's record of one verb and target). */
export const groupLock = (verb: string, targetId: string) => JSON.stringify(['group', verb, targetId]);

/** The lock key of one member's membership in one community. */
export const memberLock = (communityId: string, userId: string) =>
  JSON.stringify(['member', communityId, userId]);

/**
 * The lock key of one post's removals: a removal takes it exclusively, every write of an action
 * on the post shared, so a write reads the post's tombstones either before a removal stores one
 * (and the removal then finds its action) or after it commits.
 */
export const postLock = (postId: string) => JSON.stringify(['post', postId]);

/**
 * The lock key of one user's mutes: a PUT and a DELETE take it, so a PUT's count of the mutes in
 * force and its insert are one step against every other PUT (the limit of mutes in force) and
 * DELETE of the user.
 */
export const muteLock = (userId: string) => JSON.stringify(['mutes', userId]);

/** The lock key of one owner's block list: a block's count and insert are one step (postgres-block-list.ts). */
export const blockListLock = (netidUid: string) => JSON.stringify(['block-list', netidUid]);

/**
 * The lock key of one user's profile: a deletion takes it exclusively while it stores the deleted
 * profile and rewrites the user's snapshots; every write of an action takes its actor's and, when
 * addressed to one user, its recipient's, shared. So a write reads the profile (its statements
 * leave a deleted recipient out and name a deleted actor `Deleted user`) either after the deletion
 * committed, or commits before the deletion reads what it rewrites and deletes.
 */
export const profileLock = (userId: string) => JSON.stringify(['profile', userId]);

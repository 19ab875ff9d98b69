import type pg from 'pg';

/** Seeds the lock hashes, so the tray's locks stay apart from other users of advisory locks. */
const LOCK_SEED = 7_240_312;

/**
 * Takes transaction-level advisory locks on `keys` (record groups, members), exclusive, and on
 * `shared` keys, shared, all in one order every writer follows, so two writers never wait on each
 * other crosswise. Held until commit: a writer that waited then reads (READ COMMITTED: a new
 * snapshot per statement) everything the other committed, so two writes of one record group never
 * compute from each other's missing actors.
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
    name: 'tray_lock_keys',
    text: `SELECT CASE WHEN only_shared THEN pg_advisory_xact_lock_shared(h) ELSE pg_advisory_xact_lock(h) END
           FROM (SELECT hashtextextended(k, $3) AS h, bool_and(s) AS only_shared
                 FROM unnest($1::text[], $2::boolean[]) AS x(k, s) GROUP BY 1) AS hashes
           ORDER BY h`,
    values: [all, all.map((key) => !exclusive.has(key)), LOCK_SEED],
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

/**
 * The lock key of one user's profile: a deletion takes it exclusively while it stores the deleted
 * profile and rewrites the user's snapshots; every write of an action takes its actor's and, when
 * addressed to one user, its recipient's, shared. So a write reads the profile (its statements
 * leave a deleted recipient out and name a deleted actor `Deleted user`) either after the deletion
 * committed, or commits before the deletion reads what it rewrites and deletes.
 */
export const profileLock = (userId: string) => JSON.stringify(['profile', userId]);

import type pg from 'pg';

/** Seeds the lock hashes, so the tray's locks stay apart from other users of advisory locks. */
const LOCK_SEED = 7_240_312;

/**
 * Takes transaction-level advisory locks on `keys` (record groups, members), in one order every
 * writer follows, so two writers never wait on each other crosswise. Held until commit: a writer
 * that waited then reads (READ COMMITTED: a new snapshot per statement) everything the other
 * committed, so two writes of one record group never compute from each other's missing actors.
 */
export async function lockKeys(client: pg.PoolClient, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await client.query({
    // Prepared once per connection: every write runs it.
    name: 'tray_lock_keys',
    text: `SELECT pg_advisory_xact_lock(h)
           FROM (SELECT DISTINCT hashtextextended(k, $2) AS h FROM unnest($1::text[]) AS k) AS hashes
           ORDER BY h`,
    values: [[...new Set(keys)], LOCK_SEED],
  });
}

/** The lock key of one record group (every recipient's record of one verb and target). */
export const groupLock = (verb: string, targetId: string) => JSON.stringify(['group', verb, targetId]);

/** The lock key of one member's membership in one community. */
export const memberLock = (communityId: string, userId: string) =>
  JSON.stringify(['member', communityId, userId]);

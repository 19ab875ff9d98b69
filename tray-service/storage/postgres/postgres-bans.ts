import type pg from 'pg';
import { banRank, type BanChange } from '../../domain/ban-change.ts';
import type { BansPort } from '../port.ts';

/** Of each user's changes in `changes`, the one of highest rank, in user id order. */
function newestPerUser(changes: readonly BanChange[]): BanChange[] {
  const newest = new Map<string, BanChange>();
  for (const change of changes) {
    const held = newest.get(change.userId);
    if (!held || banRank(change) > banRank(held)) newest.set(change.userId, change);
  }
  return [...newest.values()].sort((a, b) => (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0));
}

/**
 * user_bans: one row per user, their change of highest rank. An upsert replaces the row only with
 * a change of higher rank, so a change delivered late or twice changes nothing, and the outcome
 * never depends on the order of arrival (the row lock orders concurrent upserts of one user).
 */
export function createPostgresBans(pool: pg.Pool): BansPort {
  return {
    async apply(changes) {
      // Each user once (one statement cannot touch a row twice) and in key order (no deadlock
      // between two workers applying overlapping batches).
      const batch = newestPerUser(changes);
      if (batch.length === 0) return;
      await pool.query(
        `INSERT INTO user_bans (user_id, banned, changed_at, rank)
         SELECT * FROM unnest($1::text[], $2::boolean[], $3::bigint[], $4::bigint[])
         ON CONFLICT (user_id) DO UPDATE
           SET banned = excluded.banned, changed_at = excluded.changed_at, rank = excluded.rank
           WHERE user_bans.rank < excluded.rank`,
        [
          batch.map((change) => change.userId),
          batch.map((change) => change.banned),
          batch.map((change) => change.at),
          batch.map((change) => banRank(change)),
        ],
      );
    },

    async all() {
      const { rows } = await pool.query<{ user_id: string; banned: boolean; changed_at: string }>(
        'SELECT user_id, banned, changed_at FROM user_bans',
      );
      // bigint comes back as text from node-postgres; epoch ms are well inside a double.
      return rows.map((row) => ({ userId: row.user_id, banned: row.banned, at: Number(row.changed_at) }));
    },
  };
}

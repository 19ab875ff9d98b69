import type pg from 'pg';
import type { BlockEntry, BlockListPort } from '../port.ts';
import { inTransaction } from './in-transaction.ts';
import { blockListLock, lockKeys } from './lock-keys.ts';

/**
 * block_list: who each owner (`${NETWORK_ID}_${userId}`) has blocked. Every query is an equality
 * on the owner and reads the primary key (netid_uid, blocked_user_id), whose "C" collation gives
 * pages in byte order of the blocked ids.
 */
export function createPostgresBlockList(pool: pg.Pool): BlockListPort {
  return {
    async block(netidUid, blockedUserId, maxEntries) {
      // Blocking twice, or two requests at once, leaves one entry.
      if (maxEntries === undefined) {
        await pool.query(
          `INSERT INTO block_list (netid_uid, blocked_user_id) VALUES ($1, $2)
           ON CONFLICT (netid_uid, blocked_user_id) DO NOTHING`,
          [netidUid, blockedUserId],
        );
        return 'blocked';
      }
      return inTransaction(pool, async (client) => {
        // The count and the insert are read committed: two blocks of one owner at once would each
        // count without the other's entry and both go past the limit. The owner's lock, held until
        // commit, makes the second count after the first committed.
        await lockKeys(client, [blockListLock(netidUid)]);
        // Counted up to $3 on the primary key's owner prefix. The second EXISTS reads the
        // statement's snapshot, before the insert: an entry already there is 'blocked' even at the limit.
        const { rows } = await client.query<{ blocked: boolean }>(
          `WITH counted AS (
             SELECT count(*) AS n FROM (SELECT 1 FROM block_list WHERE netid_uid = $1 LIMIT $3) AS owned),
           inserted AS (
             INSERT INTO block_list (netid_uid, blocked_user_id)
             SELECT $1, $2 WHERE (SELECT n FROM counted) < $3
             ON CONFLICT (netid_uid, blocked_user_id) DO NOTHING
             RETURNING 1)
           SELECT EXISTS (SELECT 1 FROM inserted)
             OR EXISTS (SELECT 1 FROM block_list WHERE netid_uid = $1 AND blocked_user_id = $2) AS blocked`,
          [netidUid, blockedUserId, maxEntries],
        );
        return rows[0]?.blocked === true ? 'blocked' : 'full';
      });
    },

    async forget(netidUid) {
      await pool.query('DELETE FROM block_list WHERE netid_uid = $1', [netidUid]);
    },

    async unblock(netidUid, blockedUserId) {
      await pool.query('DELETE FROM block_list WHERE netid_uid = $1 AND blocked_user_id = $2', [
        netidUid,
        blockedUserId,
      ]);
    },

    async page(netidUid, after, pageSize) {
      // One row past the page tells whether another follows, so the last page carries no token
      // (never an empty page after it).
      const { rows } = await pool.query<BlockEntry>(
        `SELECT netid_uid, blocked_user_id AS "blocked_userId" FROM block_list
         WHERE netid_uid = $1 ${after === undefined ? '' : 'AND blocked_user_id > $3'}
         ORDER BY blocked_user_id LIMIT $2`,
        after === undefined ? [netidUid, pageSize + 1] : [netidUid, pageSize + 1, after],
      );
      const results = rows.slice(0, pageSize);
      const last = results.at(-1);
      return { results, paginationToken: rows.length > pageSize && last ? { ...last } : null };
    },

    async blockedAmong(netidUid, userIds) {
      if (userIds.length === 0) return new Set();
      const { rows } = await pool.query<{ blocked_user_id: string }>(
        'SELECT blocked_user_id FROM block_list WHERE netid_uid = $1 AND blocked_user_id = ANY($2::text[])',
        [netidUid, [...new Set(userIds)]],
      );
      return new Set(rows.map((row) => row.blocked_user_id));
    },
  };
}

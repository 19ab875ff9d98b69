import type pg from 'pg';
import type { MembersImportPort } from '../port.ts';
import { inTransaction } from './in-transaction.ts';
import { lockKeys, memberLock } from './lock-keys.ts';
import { memberId, refoldMemberships, sortedMembers } from './postgres-memberships.ts';

/**
 * Memberships from the platform's own list (npm run import-members). Each listed member is stored
 * as a join at `since` plus a join at `asOf` (tray_imported_members), folded with the change log:
 * a leave stored before the list was taken is overridden, one after it stands. A member imported
 * before keeps the join time the tray has; the list moves their as-of time forward only when they
 * were not a member at the new `asOf`. Re-importing a file changes nothing. Every row is counted
 * once: inserted, updated, or unchanged (a repeat of a member earlier in the batch included).
 */
export function createPostgresMembersImport(pool: pg.Pool): MembersImportPort {
  return {
    async importBatch(members, asOf) {
      if (members.length === 0) return { inserted: 0, updated: 0, unchanged: 0 };
      const since = new Map<string, number>();
      for (const member of members) {
        const id = memberId(member);
        since.set(id, Math.min(since.get(id) ?? Infinity, member.since));
      }
      const sorted = sortedMembers(members);
      const communities = sorted.map((member) => member.communityId);
      const users = sorted.map((member) => member.userId);
      return inTransaction(pool, async (client) => {
        // Counted afresh by each run: a deadlock or serialization failure runs this again.
        // A member listed again in the batch is one membership: the repeats change nothing, and are
        // counted so (as on MongoDB), so that the counts add up to the lines given.
        const counts = { inserted: 0, updated: 0, unchanged: members.length - sorted.length };
        await lockKeys(
          client,
          sorted.map((member) => memberLock(member.communityId, member.userId)),
        );
        const existing = await client.query<{
          community_id: string;
          user_id: string;
          as_of: string;
          member: boolean;
        }>(
          `SELECT i.community_id, i.user_id, i.as_of,
                  EXISTS (SELECT 1 FROM tray_memberships t
                          WHERE t.community_id = i.community_id AND t.user_id = i.user_id
                            AND t.from_at <= $3 AND $3 < t.to_at) AS member
           FROM unnest($1::text[], $2::text[]) AS m(community_id, user_id)
           JOIN tray_imported_members i USING (community_id, user_id)`,
          [communities, users, asOf],
        );
        const known = new Map(
          existing.rows.map((row) => [memberId({ communityId: row.community_id, userId: row.user_id }), row]),
        );
        const inserts: typeof sorted = [];
        const updates: typeof sorted = [];
        for (const member of sorted) {
          const row = known.get(memberId(member));
          if (!row) inserts.push(member);
          else if (!row.member && Number(row.as_of) < asOf) updates.push(member);
          else counts.unchanged += 1;
        }
        if (inserts.length > 0) {
          const result = await client.query(
            `INSERT INTO tray_imported_members (community_id, user_id, since, as_of)
             SELECT community_id, user_id, since, $4 FROM unnest($1::text[], $2::text[], $3::bigint[])
               AS m(community_id, user_id, since)
             ON CONFLICT DO NOTHING`,
            [
              inserts.map((member) => member.communityId),
              inserts.map((member) => member.userId),
              inserts.map((member) => since.get(memberId(member)) ?? asOf),
              asOf,
            ],
          );
          counts.inserted = result.rowCount ?? 0;
          counts.unchanged += inserts.length - counts.inserted;
        }
        if (updates.length > 0) {
          const result = await client.query(
            `UPDATE tray_imported_members i SET as_of = $3
             FROM unnest($1::text[], $2::text[]) AS m(community_id, user_id)
             WHERE i.community_id = m.community_id AND i.user_id = m.user_id AND i.as_of < $3`,
            [updates.map((member) => member.communityId), updates.map((member) => member.userId), asOf],
          );
          counts.updated = result.rowCount ?? 0;
          counts.unchanged += updates.length - counts.updated;
        }
        // No pruning here (cutoff 0): the import is not a change of the log.
        await refoldMemberships(client, sorted, 0);
        return counts;
      });
    },
  };
}

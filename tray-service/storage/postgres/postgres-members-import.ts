import type pg from 'pg';
import type { MembersImportPort } from '../port.ts';
import { inTransaction } from './in-transaction.ts';
import { lockKeys, memberLock } from './lock-keys.ts';
import { memberId, refoldMemberships, sortedMembers } from './postgres-memberships.ts';

/**
 * Memberships from the platform's own list (npm run import-members). Each listed member is stored
 * as a join at `since` plus a join at each list's `asOf` (tray_imported_members: as_of, the first
 * list's, and relisted_at, every other list's), folded with the change log: a leave stored before
 * a list was taken is overridden, one after it stands. A member imported before keeps the join
 * time the tray has, and every earlier list's join: a list adds its own, whatever the member was
 * at its time, so a leave before it does the same arriving before the import or after. Re-importing
 * a file changes nothing. Every row is counted once: inserted (a member new to the imports),
 * updated (the list's time stored for a member imported before), or unchanged (that time stored
 * already, or a repeat of a member earlier in the batch).
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
        await lockKeys(
          client,
          sorted.map((member) => memberLock(member.communityId, member.userId)),
        );
        // The members imported before: the list's time added where they lack it (the locks keep
        // another import of them out until this one commits).
        const updated = await client.query(
          `UPDATE tray_imported_members i SET relisted_at = i.relisted_at || $3::bigint
           FROM unnest($1::text[], $2::text[]) AS m(community_id, user_id)
           WHERE i.community_id = m.community_id AND i.user_id = m.user_id
             AND i.as_of <> $3 AND NOT $3 = ANY (i.relisted_at)`,
          [communities, users, asOf],
        );
        // The others (a member just updated is there: nothing inserted).
        const inserted = await client.query(
          `INSERT INTO tray_imported_members (community_id, user_id, since, as_of)
           SELECT community_id, user_id, since, $4 FROM unnest($1::text[], $2::text[], $3::bigint[])
             AS m(community_id, user_id, since)
           ON CONFLICT DO NOTHING`,
          [communities, users, sorted.map((member) => since.get(memberId(member)) ?? asOf), asOf],
        );
        const counts = { inserted: inserted.rowCount ?? 0, updated: updated.rowCount ?? 0 };
        // No pruning here (cutoff 0): the import is not a change of the log.
        await refoldMemberships(client, sorted, 0);
        // A member listed again in the batch is one membership: the repeats change nothing, and are
        // counted so (as on MongoDB), so that the counts add up to the lines given.
        return { ...counts, unchanged: members.length - counts.inserted - counts.updated };
      });
    },
  };
}

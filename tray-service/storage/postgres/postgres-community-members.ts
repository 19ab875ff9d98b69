import type pg from 'pg';
import type { CommunityMembersPort } from '../port.ts';

/**
 * Who was a member of a community at a time, from the folded membership intervals a fan-out joins
 * (tray_memberships, [from_at, to_at)): the same rule, so the list is the users a post created at
 * that time reached. The primary key (community_id, user_id, from_at) serves every query here (in
 * user id order); a member has at most one interval holding any instant.
 */
export function createPostgresCommunityMembers(pool: pg.Pool): CommunityMembersPort {
  return {
    async membersAt(communityId, at, page) {
      const { rows } = await pool.query<{ user_id: string }>({
        name: 'tray_community_members_at',
        text: `SELECT user_id FROM tray_memberships
               WHERE community_id = $1 AND from_at <= $2 AND $2 < to_at
                 AND user_id > $3 AND user_id IS DISTINCT FROM $4
               ORDER BY user_id LIMIT $5`,
        values: [communityId, at, page.after ?? '', page.exclude ?? null, page.limit + 1],
      });
      const userIds = rows.slice(0, page.limit).map((row) => row.user_id);
      const last = userIds.at(-1);
      return rows.length > page.limit && last !== undefined ? { userIds, next: last } : { userIds };
    },

    async countMembersAt(communityId, at, exclude) {
      const { rows } = await pool.query<{ n: number }>({
        name: 'tray_community_members_at_count',
        text: `SELECT count(*)::int AS n FROM tray_memberships
               WHERE community_id = $1 AND from_at <= $2 AND $2 < to_at AND user_id IS DISTINCT FROM $3`,
        values: [communityId, at, exclude ?? null],
      });
      return rows[0]?.n ?? 0;
    },

    membersAmong: (communityId, at, userIds) =>
      usersAmong(pool, 'tray_memberships', communityId, at, userIds),

    // The away spans a personal write checks (tray_member_away, [from_at, to_at)).
    awayAmong: (communityId, at, userIds) => usersAmong(pool, 'tray_member_away', communityId, at, userIds),
  };
}

/** Which of `userIds` have a span of `table` ([from_at, to_at) per community and user) holding `at`. */
async function usersAmong(
  pool: pg.Pool,
  table: 'tray_memberships' | 'tray_member_away',
  communityId: string,
  at: number,
  userIds: readonly string[],
): Promise<Set<string>> {
  if (userIds.length === 0) return new Set();
  const { rows } = await pool.query<{ user_id: string }>({
    name: `${table}_among`,
    text: `SELECT user_id FROM ${table}
           WHERE community_id = $1 AND user_id = ANY($3::text[]) AND from_at <= $2 AND $2 < to_at`,
    values: [communityId, at, [...userIds]],
  });
  return new Set(rows.map((row) => row.user_id));
}

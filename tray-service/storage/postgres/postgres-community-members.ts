import type pg from 'pg';
import type { Activity } from '../../domain/activity.ts';
import { activityPost } from '../../domain/activity-post.ts';
import { muteTargetsCovering } from '../../domain/mute.ts';
import type { MuteTarget } from '../../domain/mute-changes.ts';
import type { CommunityMembersPort } from '../port.ts';
import { heldBackSql } from './held-back-sql.ts';
import type { SqlQuery } from './sql-conditions.ts';
import { MUTE_COLUMNS, toMute, type MuteRow } from './postgres-mutes.ts';

/** Members of $1 at $2 but $3 (the author), by the interval the fan-out joins. */
const MEMBERS_AT = `FROM tray_memberships ms
  WHERE ms.community_id = $1 AND ms.from_at <= $2 AND $2 < ms.to_at AND ms.user_id IS DISTINCT FROM $3`;

/**
 * `held`: the users whose mute held the post back, to be left out of MEMBERS_AT. Its candidates are
 * the owners of the spans on the post's targets ($4, $5: types and ids), read by target
 * (tray_mutes_target, the read the fan-out makes: as many rows as there are mutes on them); each is
 * judged by the fan-out's own expression (the post's verb $6, post $7 and community $8) on the
 * primary key. Materialized once, it is a hashed `NOT IN` on each member, in the primary key's order.
 */
const HELD = `WITH held AS MATERIALIZED (
    SELECT u.user_id FROM (
      SELECT DISTINCT user_id FROM tray_mutes
      WHERE (target_type, target_id) IN (SELECT * FROM unnest($4::text[], $5::text[]))) AS u
    WHERE ${heldBackSql({
      user: 'u.user_id',
      actor: '$3::text',
      verb: '$6::text',
      post: '$7::text',
      community: '$8::text',
      at: '$2::bigint',
    })})`;
const NOT_HELD_BACK = 'ms.user_id NOT IN (SELECT user_id FROM held)';

/** The values of $1-$8 of a post's recipients (HELD). */
function postValues(communityId: string, post: Activity): unknown[] {
  const targets = muteTargetsCovering(post);
  return [
    communityId,
    post.at,
    post.actor.userId,
    targets.map((target) => target.targetType),
    targets.map((target) => target.targetId),
    post.verb,
    activityPost(post) ?? null,
    post.communityId ?? null,
  ];
}

/** A page of the post's recipients (postRecipients): one statement, `limit` + 1 rows. */
export function postRecipientsQuery(
  communityId: string,
  post: Activity,
  page: { limit: number; after?: string },
): SqlQuery {
  return {
    text: `${HELD} SELECT ms.user_id ${MEMBERS_AT} AND ${NOT_HELD_BACK}
           AND ms.user_id > $9 ORDER BY ms.user_id LIMIT $10`,
    values: [...postValues(communityId, post), page.after ?? '', page.limit + 1],
  };
}

/** How many recipients the post has (countPostRecipients): one statement. */
export function countPostRecipientsQuery(communityId: string, post: Activity): SqlQuery {
  return {
    text: `${HELD} SELECT count(*)::int AS n ${MEMBERS_AT} AND ${NOT_HELD_BACK}`,
    values: postValues(communityId, post),
  };
}

/** The page of user ids of `rows` (fetched `limit` + 1 to tell whether more follow). */
function pageOf(rows: { user_id: string }[], limit: number): { userIds: string[]; next?: string } {
  const userIds = rows.slice(0, limit).map((row) => row.user_id);
  const last = userIds.at(-1);
  return rows.length > limit && last !== undefined ? { userIds, next: last } : { userIds };
}

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
        text: `SELECT ms.user_id ${MEMBERS_AT} AND ms.user_id > $4 ORDER BY ms.user_id LIMIT $5`,
        values: [communityId, at, page.exclude ?? null, page.after ?? '', page.limit + 1],
      });
      return pageOf(rows, page.limit);
    },

    async countMembersAt(communityId, at, exclude) {
      const { rows } = await pool.query<{ n: number }>({
        name: 'tray_community_members_at_count',
        text: `SELECT count(*)::int AS n ${MEMBERS_AT}`,
        values: [communityId, at, exclude ?? null],
      });
      return rows[0]?.n ?? 0;
    },

    async postRecipients(communityId, post, page) {
      const { rows } = await pool.query<{ user_id: string }>({
        name: 'tray_post_recipients',
        ...postRecipientsQuery(communityId, post, page),
      });
      return pageOf(rows, page.limit);
    },

    async countPostRecipients(communityId, post) {
      const { rows } = await pool.query<{ n: number }>({
        name: 'tray_post_recipients_count',
        ...countPostRecipientsQuery(communityId, post),
      });
      return rows[0]?.n ?? 0;
    },

    membersAmong: (communityId, at, userIds) =>
      usersAmong(pool, 'tray_memberships', communityId, at, userIds),

    // The away spans a personal write checks (tray_member_away, [from_at, to_at)).
    awayAmong: (communityId, at, userIds) => usersAmong(pool, 'tray_member_away', communityId, at, userIds),

    // The primary key (user_id, target_type, target_id, ...), as a personal write reads its recipients' spans.
    async muteSpansOn(userIds, targets: readonly MuteTarget[]) {
      if (userIds.length === 0 || targets.length === 0) return [];
      const { rows } = await pool.query<MuteRow>({
        name: 'tray_mute_spans_on',
        text: `SELECT ${MUTE_COLUMNS} FROM tray_mutes
               WHERE user_id = ANY($1::text[])
                 AND (target_type, target_id) IN (SELECT * FROM unnest($2::text[], $3::text[]))`,
        values: [[...userIds], targets.map((target) => target.targetType), targets.map((t) => t.targetId)],
      });
      return rows.map(toMute);
    },
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

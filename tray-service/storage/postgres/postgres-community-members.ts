import type pg from 'pg';
import type { Activity } from '../../domain/activity.ts';
import { activityPost } from '../../domain/activity-post.ts';
import { muteTargetsCovering } from '../../domain/mute.ts';
import type { MuteTarget } from '../../domain/mute-changes.ts';
import type { CommunityMembersPort } from '../port.ts';
import { heldBackSql } from './held-back-sql.ts';
import type { SqlQuery } from './sql-conditions.ts';
import { MUTE_COLUMNS, toMute, type MuteRow } from './postgres-mutes.ts';
import { OPEN_END } from './postgres-memberships.ts';
import { deletedUserSql } from './deleted-actor-sql.ts';
import { personalAwaySql } from './personal-away-sql.ts';

/** Whether user `user` (an SQL expression) has a membership interval of $1 holding $2. */
const memberAt = (user: string) => `EXISTS (SELECT 1 FROM tray_memberships mb
  WHERE mb.community_id = $1 AND mb.user_id = ${user} AND mb.from_at <= $2 AND $2 < mb.to_at)`;

/**
 * The place of $1's community post whose action id is `actionId` (an SQL expression;
 * tray_community_posts by its primary key): one no longer kept takes the largest, after every
 * change, as a redelivery's fan-out does.
 */
const postPlace = (actionId: string) => `coalesce((SELECT cp.processed FROM tray_community_posts cp
  WHERE cp.community_id = $1 AND cp.action_id = ${actionId}), ${OPEN_END})`;

/**
 * `late`: those the post at $2 (its author $3) reached although the intervals leave them out at its
 * time, the fan-out's `lateLeavers` deliveries: a leave of theirs covering it was processed after
 * the post took its place (the index of leaves by place: none for most posts, for an old one the
 * community's leaves since), and they are members for it by the processing order (tray_member_for,
 * which a join processed after the post and its backfill satisfy too). Materialized once, few rows.
 */
const LATE = `late AS MATERIALIZED (
    SELECT c.user_id FROM (SELECT ${postPlace('$9')} AS place) AS k
    CROSS JOIN LATERAL (SELECT DISTINCT l.user_id FROM tray_membership_changes l
      WHERE l.community_id = $1 AND NOT l.joined AND l.processed > k.place AND l.at <= $2) AS c
    WHERE c.user_id IS DISTINCT FROM $3 AND NOT ${memberAt('c.user_id')}
      AND tray_member_for($1, c.user_id, $2, k.place) AND NOT ${deletedUserSql('c.user_id')})`;

/**
 * The intervals' members of $1 at the post's time $2 but its author $3 and deleted users (nothing
 * reaches them), read by the primary key in user id order.
 */
const MEMBERS = `FROM tray_memberships ms
    WHERE ms.community_id = $1 AND ms.from_at <= $2 AND $2 < ms.to_at AND ms.user_id IS DISTINCT FROM $3
      AND NOT ${deletedUserSql('ms.user_id')}`;

/**
 * `held`: the users whose mute held the post back, to be left out of MEMBERS and `late`. Its candidates are
 * the owners of the spans on the post's targets ($4, $5: types and ids), read by target
 * (tray_mutes_target, the read the fan-out makes: as many rows as there are mutes on them); each is
 * judged by the fan-out's own expression (the post's verb $6, post $7 and community $8) on the
 * primary key. Materialized once, it is a hashed `NOT IN` on each member, in the primary key's order.
 */
const HELD = `WITH ${LATE}, held AS MATERIALIZED (
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

/** The values of $1-$9 of a post's recipients (HELD, LATE). */
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
    post.lastActionId,
  ];
}

/**
 * A page of the post's recipients (postRecipients): one statement, `limit` + 1 rows. The
 * intervals' members are limited to the page on their own, read in the primary key's order (a
 * union's order is not pushed into its sides: it read and sorted the whole community), then merged
 * with the few late ones, the only rows sorted.
 */
export function postRecipientsQuery(
  communityId: string,
  post: Activity,
  page: { limit: number; after?: string },
): SqlQuery {
  return {
    text: `${HELD} SELECT r.user_id FROM (
             (SELECT ms.user_id ${MEMBERS} AND ms.user_id > $10 AND ms.user_id NOT IN (SELECT user_id FROM held)
              ORDER BY ms.user_id LIMIT $11)
             UNION ALL SELECT late.user_id FROM late
              WHERE late.user_id > $10 AND late.user_id NOT IN (SELECT user_id FROM held)) AS r
           ORDER BY r.user_id LIMIT $11`,
    values: [...postValues(communityId, post), page.after ?? '', page.limit + 1],
  };
}

/** How many recipients the post has (countPostRecipients): one statement. */
export function countPostRecipientsQuery(communityId: string, post: Activity): SqlQuery {
  return {
    text: `${HELD} SELECT count(*)::int AS n FROM (SELECT ms.user_id ${MEMBERS}
             UNION ALL SELECT late.user_id FROM late) AS r
           WHERE r.user_id NOT IN (SELECT user_id FROM held)`,
    values: postValues(communityId, post),
  };
}

/** Which of `userIds` the post reached as members (reachedAmong): each by the primary keys. */
export function reachedAmongQuery(communityId: string, post: Activity, userIds: readonly string[]): SqlQuery {
  return {
    // The intervals first, the processing order's rule where they say no.
    text: `SELECT u.user_id FROM unnest($3::text[]) AS u(user_id)
           WHERE u.user_id <> $5 AND NOT ${deletedUserSql('u.user_id')}
             AND (${memberAt('u.user_id')} OR tray_member_for($1, u.user_id, $2, ${postPlace('$4')}))`,
    values: [communityId, post.at, [...userIds], post.lastActionId, post.actor.userId],
  };
}

/**
 * The indexes (`i`) of the activities addressed to one user that reached them in no way
 * (notReached), or undefined when none is addressed to one user. The personal write's own checks
 * (upsert-group-records.ts): a deleted recipient, or one away for it (personalAwaySql).
 */
export function notReachedQuery(activities: readonly Activity[]): SqlQuery | undefined {
  const personal = activities.flatMap((activity, i) =>
    activity.audience.kind === 'user' ? [{ i, userId: activity.audience.userId, activity }] : [],
  );
  if (personal.length === 0) return undefined;
  const column = <T>(pick: (row: (typeof personal)[number]) => T) => personal.map(pick);
  return {
    text: `SELECT d.i FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
             $7::text[], $8::bigint[]) AS d(i, user_id, community_id, verb, target_id, actor_id, action_id, at)
           -- The profile by its primary key, a scalar read per recipient: an EXISTS beside the OR
           -- may become a hashed read of every deleted profile.
           WHERE coalesce((SELECT gone.deleted FROM tray_profiles gone WHERE gone.user_id = d.user_id), false)
             OR ${personalAwaySql({
               user: 'd.user_id',
               community: 'd.community_id',
               verb: 'd.verb',
               target: 'd.target_id',
               actor: 'd.actor_id',
               action: 'd.action_id',
               at: 'd.at',
             })}`,
    values: [
      column((row) => row.i),
      column((row) => row.userId),
      column((row) => row.activity.communityId ?? null),
      column((row) => row.activity.verb),
      column((row) => row.activity.targetId),
      column((row) => row.activity.actor.userId),
      column((row) => row.activity.lastActionId),
      column((row) => row.activity.at),
    ],
  };
}

/** The page of user ids of `rows` (fetched `limit` + 1 to tell whether more follow). */
function pageOf(rows: { user_id: string }[], limit: number): { userIds: string[]; next?: string } {
  const userIds = rows.slice(0, limit).map((row) => row.user_id);
  const last = userIds.at(-1);
  return rows.length > limit && last !== undefined ? { userIds, next: last } : { userIds };
}

/**
 * Whom a community's actions reached, by the rules the writes apply: a post's fan-out (the
 * intervals it joins, the late leavers it adds) and a personal write's away check
 * (tray_away_for_action at the kept action's place), a deleted user never. Pages read the memberships' primary key in
 * user id order.
 */
export function createPostgresCommunityMembers(pool: pg.Pool): CommunityMembersPort {
  return {
    async reachedAmong(communityId, post, userIds) {
      if (userIds.length === 0) return new Set();
      const { rows } = await pool.query<{ user_id: string }>({
        name: 'tray_post_reached_among',
        ...reachedAmongQuery(communityId, post, userIds),
      });
      return new Set(rows.map((row) => row.user_id));
    },

    async notReached(activities) {
      const query = notReachedQuery(activities);
      if (!query) return activities.map(() => false);
      const { rows } = await pool.query<{ i: number }>({ name: 'tray_personal_not_reached', ...query });
      const missed = new Set(rows.map((row) => row.i));
      return activities.map((_, index) => missed.has(index));
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

import type pg from 'pg';
import type { Activity } from '../../domain/activity.ts';
import { activityPost } from '../../domain/activity-post.ts';
import { compareActions } from '../../domain/group-actors.ts';
import type { InboxRecord } from '../../domain/inbox-record.ts';
import type { TrayRecord } from '../../domain/tray-record.ts';
import { DELETED_NAME, deletedActorSql, deletedMarkSql, deletedUserSql } from './deleted-actor-sql.ts';
import { personalAwaySql } from './personal-away-sql.ts';
import { actorsSinceSql, actorTimesSql } from './actors-since-sql.ts';
import { exactActorsSql } from './exact-actors-sql.ts';
import { heldBackSql, MUTE_END, MUTES_OF_RECIPIENTS, MUTES_ON_TARGETS } from './held-back-sql.ts';
import { KEEP_PERSONAL_ACTIONS } from './personal-actions.ts';
import { OPEN_END } from './postgres-memberships.ts';
import { toInboxRecord } from './inbox-row.ts';

/** An activity as the grouped upsert reads it (jsonb_to_recordset), `i` its index in the batch. */
interface ActivityRow {
  i: number;
  recipient: string | null;
  verb: string;
  target_id: string;
  target_type: string;
  target_name: string;
  parent_target_id: string | null;
  action_id: string;
  seg: number | null;
  feed: unknown;
  mention_in: string | null;
  actor_id: string;
  name: string;
  image_url: string | null;
  avatar_custom_url: string | null;
  at: number;
  /** The community of the action's target (docs/tray-rules.md#leaving-and-rejoining-a-community). */
  community_id: string | null;
  /** The post the action belongs to (activity-post.ts): where a removal finds it. */
  post_id: string | null;
}

/**
 * The rows of `activities`, numbered in action order (time, then action id: compareActions), so
 * the newest action a recipient meets is simply the one of highest number.
 */
export function activityRows(activities: readonly Activity[]): ActivityRow[] {
  const ordered = [...activities].sort((a, b) =>
    compareActions({ at: a.at, actionId: a.lastActionId }, { at: b.at, actionId: b.lastActionId }),
  );
  return ordered.map((activity, i) => ({
    i,
    recipient: activity.audience.kind === 'user' ? activity.audience.userId : null,
    verb: activity.verb,
    target_id: activity.targetId,
    target_type: activity.targetType,
    target_name: activity.targetName,
    parent_target_id: activity.parentTargetId ?? null,
    action_id: activity.lastActionId,
    seg: activity.lastActionSegmentNo ?? null,
    feed: activity.feed,
    mention_in: activity.mentionIn ?? null,
    actor_id: activity.actor.userId,
    name: activity.actor.name,
    image_url: activity.actor.imageUrl ?? null,
    avatar_custom_url: activity.actor.avatarCustomUrl ?? null,
    at: activity.at,
    community_id:
      activity.audience.kind === 'community' ? activity.audience.communityId : (activity.communityId ?? null),
    post_id: activityPost(activity) ?? null,
  }));
}

/**
 * The activities `$1` as the statements read them, an actor whose stored profile is deleted named
 * as the deletion named them (docs/tray-rules.md#deleted-users: `Deleted user`, no image), with
 * `actor_deleted` saying so (the mark of the snapshots written from them): an action created before
 * the deletion and delivered after it keeps and shows no other name. Read after the writer took its actors' profile locks (lock-keys.ts).
 */
const ACTIVITIES = `SELECT x.i, x.recipient, x.verb, x.target_id, x.target_type, x.target_name, x.parent_target_id,
    x.action_id, x.seg, x.feed, x.mention_in, x.actor_id,
    CASE WHEN gone.user_id IS NULL THEN x.name ELSE ${DELETED_NAME} END AS name,
    CASE WHEN gone.user_id IS NULL THEN x.image_url END AS image_url,
    CASE WHEN gone.user_id IS NULL THEN x.avatar_custom_url END AS avatar_custom_url,
    x.at, x.community_id, x.post_id, gone.user_id IS NOT NULL AS actor_deleted
  FROM jsonb_to_recordset($1::jsonb) AS x(i int, recipient text, verb text,
    target_id text, target_type text, target_name text, parent_target_id text, action_id text, seg bigint,
    feed json, mention_in text, actor_id text, name text, image_url text, avatar_custom_url text, at bigint,
    community_id text, post_id text)
  LEFT JOIN tray_profiles AS gone ON gone.user_id = x.actor_id AND gone.deleted`;

/**
 * A data-modifying CTE over the activities `p`: a community post whose author's profile is deleted
 * has its kept copy (tray_community_posts, stored before the fan-out and outside its locks) named
 * as the deletion names them, so a late join or leave that reads it later finds no other name.
 */
const RENAME_KEPT_POSTS = `renamed_posts AS (
       UPDATE tray_community_posts AS c
       SET activity = jsonb_set(c.activity, '{actor}', ${deletedActorSql('p.actor_id')})
       FROM p
       WHERE p.actor_deleted AND p.recipient IS NULL AND c.community_id = p.community_id
         AND c.action_id = p.action_id
         AND c.activity->'actor' <> ${deletedActorSql('p.actor_id')})`;

/** A data-modifying CTE over the activities `p`: each action of each group once per recipient. */
const KEEP_GROUP_ACTIONS = `group_kept AS (
       INSERT INTO tray_group_actions (target_id, verb, action_id, recipient, actor_id, name, image_url,
         avatar_custom_url, actor_deleted, at, seg, parent_target_id, mention_in, post_id, community_id, expires_at)
       SELECT DISTINCT ON (target_id COLLATE "C", verb COLLATE "C", action_id COLLATE "C",
                           coalesce(recipient, '') COLLATE "C")
         target_id, verb, action_id, coalesce(recipient, ''), actor_id, name, image_url, avatar_custom_url,
         actor_deleted, at, seg, parent_target_id, mention_in, post_id, community_id, at + $2
       FROM p
       ORDER BY target_id COLLATE "C", verb COLLATE "C", action_id COLLATE "C", coalesce(recipient, '') COLLATE "C"
       ON CONFLICT DO NOTHING)`;

/**
 * Adds each activity's action to its record group's actors (one row per actor, at their latest
 * action: an older or repeated action changes nothing), keeps every action with whom it reached
 * in tray_group_actions (what a removal computes records again from) and the actions on a
 * community's targets addressed to one user (personal-actions.ts). Rows de-duplicated and written
 * in key order. A deleted actor is kept as `Deleted user` everywhere (ACTIVITIES, RENAME_KEPT_POSTS).
 *
 * An actor row's expiry is its action's time plus the retention, or the expiry of the group's
 * newest actor row when later, kept by a row updated in place: a removal may have given that row
 * the expiry of the newest action it took out (RENEW_NEWEST_ACTOR, apply-removals.ts), which its
 * record lives by, and the purge judges a group by its newest actor alone
 * (purge-kept-in-batches.ts). An action delivered late may become the newest, or replace that row:
 * it must not bring the group's end sooner.
 */
export async function upsertGroupActors(
  client: pg.PoolClient,
  activities: readonly Activity[],
  retentionMs: number,
): Promise<void> {
  if (activities.length === 0) return;
  await client.query({
    // Prepared once per connection: its plan does not depend on the activities.
    name: 'tray_upsert_group_actors',
    text: `WITH p AS (${ACTIVITIES}),
     ${KEEP_PERSONAL_ACTIONS},
     ${KEEP_GROUP_ACTIONS},
     ${RENAME_KEPT_POSTS}
     INSERT INTO tray_target_actors AS t
       (verb, target_id, actor_id, name, image_url, avatar_custom_url, actor_deleted, at, action_id, expires_at)
     SELECT DISTINCT ON (target_id COLLATE "C", verb COLLATE "C", actor_id COLLATE "C")
       verb, target_id, actor_id, name, image_url, avatar_custom_url, actor_deleted, at, action_id,
       greatest(at + $2, (SELECT n.expires_at FROM tray_target_actors n
                          WHERE n.target_id = p.target_id AND n.verb = p.verb
                          ORDER BY n.at DESC, n.action_id DESC LIMIT 1))
     FROM p
     ORDER BY target_id COLLATE "C", verb COLLATE "C", actor_id COLLATE "C", at DESC, action_id COLLATE "C" DESC
     ON CONFLICT (target_id, verb, actor_id) DO UPDATE SET
       name = excluded.name, image_url = excluded.image_url, avatar_custom_url = excluded.avatar_custom_url,
       actor_deleted = excluded.actor_deleted, at = excluded.at, action_id = excluded.action_id,
       expires_at = greatest(t.expires_at, excluded.expires_at)
     WHERE (excluded.at, excluded.action_id) > (t.at, t.action_id)`,
    values: [JSON.stringify(activityRows(activities)), retentionMs],
  });
}

/**
 * What the upsert returns of each record it wrote. Every record written is unread at `now` and back
 * in the inbox unseen (neither is returned), and most take their latest-action fields from an
 * activity of this very statement: those fields are returned only for the others (`rest`), so a
 * fan-out to 10,000 members sends and parses little more than each member's actors. Its changedAt
 * is `now` too but where the record's last change was not earlier (nextChangedAt): only that one
 * is returned.
 */
const RETURNING = `RETURNING r.user_id, r.key, r.verb, r.target_id, r.last_action_id, r.actors, r.actors_count,
  r.last_update, NULLIF(r.changed_at, $2) AS changed_at,
  CASE WHEN EXISTS (SELECT 1 FROM p WHERE p.verb = r.verb AND p.target_id = r.target_id
                                      AND p.action_id = r.last_action_id) THEN NULL
       ELSE json_build_array(r.target_type, r.target_name, r.parent_target_id, r.last_action_segment_no, r.feed,
                             r.mention_in)::text END AS rest`;

interface WrittenRow {
  user_id: string;
  key: string;
  verb: string;
  target_id: string;
  last_action_id: string;
  actors: TrayRecord['actors'];
  actors_count: number;
  last_update: string;
  /** Null when it is `now`. */
  changed_at: string | null;
  rest: string | null;
}

type Rest = [string, string, string | null, number | null, TrayRecord['feed'], string | null];

const actionKey = (verb: string, targetId: string, actionId: string) =>
  JSON.stringify([verb, targetId, actionId]);

function written(rows: readonly WrittenRow[], activities: readonly Activity[], now: number): InboxRecord[] {
  const byAction = new Map(
    activities.map((activity) => [
      actionKey(activity.verb, activity.targetId, activity.lastActionId),
      activity,
    ]),
  );
  return rows.map((row) => {
    const activity = byAction.get(actionKey(row.verb, row.target_id, row.last_action_id));
    const [targetType, targetName, parentTargetId, segment, feed, mentionIn]: Rest =
      row.rest === null && activity
        ? [
            activity.targetType,
            activity.targetName,
            activity.parentTargetId ?? null,
            activity.lastActionSegmentNo ?? null,
            activity.feed,
            activity.mentionIn ?? null,
          ]
        : (JSON.parse(row.rest ?? 'null') as Rest);
    return toInboxRecord({
      user_id: row.user_id,
      key: row.key,
      verb: row.verb,
      target_id: row.target_id,
      target_type: targetType,
      target_name: targetName,
      parent_target_id: parentTargetId,
      last_action_id: row.last_action_id,
      last_action_segment_no: segment === null ? null : String(segment),
      feed,
      mention_in: mentionIn,
      actors: row.actors,
      actors_count: row.actors_count,
      last_update: row.last_update,
      has_read: false,
      unread_at: String(now),
      changed_at: row.changed_at ?? String(now),
      // Every record the upsert writes is new activity: it sets these, as has_read, unread_at and
      // changed_at, on insert and on update alike (docs/tray-rules.md#inbox).
      is_seen: false,
      archived_at: null,
      snoozed_until: null,
    });
  });
}

/**
 * The members of a community one fan-out statement reaches: ids after `after` (none: from the
 * first) up to and including `through` (none: to the last), in the column's own order.
 */
export interface MemberRange {
  after: string | null;
  through: string | null;
}

/** Where a grouped upsert's recipients come from. */
export type Deliveries =
  /** Each activity's own audience user (comments, replies, reactions, mentions). */
  | { kind: 'personal' }
  /**
   * Every member of the community at each post's createdAt (membership by time), or only those
   * of `only` among them (a late join's backfill). The activities must all be of one record group.
   */
  | { kind: 'community'; communityId: string; only?: readonly string[]; members?: MemberRange }
  /**
   * Those of `users` (late-leavers.ts) the memberships leave out at a post's time who are members
   * for it by the processing order (tray_member_for): a leave of theirs covering the post was
   * processed after the post took its place, so it takes nothing back. Judged by the kept post's
   * place, so a redelivery reaches whom the first delivery did. Of one record group, as above.
   */
  | { kind: 'lateLeavers'; communityId: string; users: readonly string[] };

/** The membership `mb` is in the statement's MemberRange ($6, $7): a range scan of the primary key. */
const IN_MEMBER_RANGE = `($6::text IS NULL OR mb.user_id > $6) AND ($7::text IS NULL OR mb.user_id <= $7)`;

/** Whether `user`'s mutes held back the activity `p` (held-back-sql.ts; their primary key). */
const heldBackOf = (user: string) =>
  heldBackSql({
    user,
    actor: 'p.actor_id',
    verb: 'p.verb',
    post: 'p.post_id',
    community: 'p.community_id',
    at: 'p.at',
  });

/**
 * The recipients of the activities, one row per record: its community (null on a user feed), the
 * earliest and newest action it takes, and for a post the start of the member's open interval (a
 * member there since before the record's countFrom and still there was never away since: the
 * record counts its group's actors as they are, without looking at their times).
 */
function deliveriesSql(deliveries: Deliveries, single: boolean): { sql: string; params: unknown[] } {
  if (deliveries.kind === 'personal')
    return {
      // An action on a community's target reaches no one who was away from it at its time, an
      // action a mute of its recipient held back reaches them in no way, and nothing reaches a
      // deleted user (docs/tray-rules.md#deleted-users). Away is judged as of the action's first
      // processing: a redelivered one kept before a leave covering it still counts (tray_away_for_action
      // with the kept row's place; a new one takes the largest, after every stored change; the
      // statement's own insert into tray_personal_actions is not visible here).
      sql: `SELECT p.recipient AS user_id, p.verb, p.target_id, min(p.community_id) AS community_id,
              NULL::bigint AS open_from, min(p.at) AS first_at, max(p.i) AS newest_i
            FROM p WHERE p.recipient IS NOT NULL AND p.recipient <> p.actor_id
              AND NOT ${deletedUserSql('p.recipient')}
              AND NOT ${personalAwaySql({
                user: 'p.recipient',
                community: 'p.community_id',
                verb: 'p.verb',
                target: 'p.target_id',
                actor: 'p.actor_id',
                action: 'p.action_id',
                at: 'p.at',
              })}
              AND NOT ${heldBackOf('p.recipient')}
            GROUP BY p.recipient, p.verb, p.target_id`,
      params: [],
    };
  if (deliveries.kind === 'lateLeavers') {
    // Their records count exactly (no open_from): the same question of every action of the time
    // away. The few users are each looked up by their keys; a post no longer kept takes the
    // largest place, after every change.
    const late = `SELECT u.user_id, p.verb, p.target_id, $4::text AS community_id, NULL::bigint AS open_from,
              p.at AS first_at, p.i AS newest_i
            FROM p
            CROSS JOIN unnest($5::text[]) AS u(user_id)
            CROSS JOIN LATERAL (
              SELECT coalesce((SELECT cp.processed FROM tray_community_posts cp
                               WHERE cp.community_id = $4 AND cp.action_id = p.action_id), ${OPEN_END}) AS processed
            ) AS k
            WHERE u.user_id <> p.actor_id
              AND NOT EXISTS (SELECT 1 FROM tray_memberships mb
                              WHERE mb.community_id = $4 AND mb.user_id = u.user_id
                                AND mb.from_at <= p.at AND p.at < mb.to_at)
              AND tray_member_for($4, u.user_id, p.at, k.processed)
              AND NOT ${heldBackOf('u.user_id')}
              AND NOT ${deletedUserSql('u.user_id')}`;
    return {
      sql: single
        ? late
        : `SELECT d.user_id, d.verb, d.target_id, d.community_id, NULL::bigint AS open_from,
                  min(d.first_at) AS first_at, max(d.newest_i) AS newest_i
           FROM (${late}) AS d GROUP BY d.user_id, d.verb, d.target_id, d.community_id`,
      params: [deliveries.communityId, [...deliveries.users]],
    };
  }
  // Only members with a mute on the post's targets (mk, hash-joined) have theirs looked up, by the
  // primary key: the planner sees the post's CTE as one row of unknown time, expects a handful of
  // members, and would scan the mutes read by target once per member (an anti-join against that
  // CTE took 6 s at 10,000 members and 1,000 mutes).
  const members = `FROM p JOIN tray_memberships mb
            ON mb.community_id = $4 AND mb.from_at <= p.at AND p.at < mb.to_at
          LEFT JOIN mk ON mk.user_id = mb.user_id
          WHERE mb.user_id <> p.actor_id AND ($5::text[] IS NULL OR mb.user_id = ANY($5::text[]))
            AND ${IN_MEMBER_RANGE}
            AND (mk.user_id IS NULL OR NOT ${heldBackOf('mb.user_id')})
            AND NOT ${deletedUserSql('mb.user_id')}`;
  const only = deliveries.only ? [...deliveries.only] : null;
  const range = [deliveries.members?.after ?? null, deliveries.members?.through ?? null];
  // One post: a member's intervals never overlap, so each member meets it once; nothing to fold.
  if (single)
    return {
      sql: `SELECT mb.user_id, p.verb, p.target_id, $4::text AS community_id,
              CASE WHEN mb.to_at = ${OPEN_END} THEN mb.from_at END AS open_from,
              p.at AS first_at, p.i AS newest_i ${members}`,
      params: [deliveries.communityId, only, ...range],
    };
  // Several posts of the one group: each membership interval folds the posts it holds, so the
  // statement never sorts or hashes members x posts rows (a member may have two intervals). Most
  // intervals hold every post, no post of their member's own and no mute of their member on these
  // targets (mk): those take the batch's first time and newest action as they are, without looking
  // at the posts one by one; the others skip what their member's mutes held back.
  return {
    sql: `SELECT mb.user_id, b.verb, b.target_id, $4::text AS community_id,
                 min(mb.from_at) FILTER (WHERE mb.to_at = ${OPEN_END}) AS open_from,
                 min(f.first_at) AS first_at, max(f.newest_i) AS newest_i
          FROM (SELECT min(verb) AS verb, min(target_id) AS target_id, min(at) AS min_at, max(at) AS max_at,
                       max(i) AS max_i, array_agg(actor_id) AS authors FROM p) AS b
          JOIN tray_memberships mb
            ON mb.community_id = $4 AND mb.from_at <= b.max_at AND b.min_at < mb.to_at
          LEFT JOIN mk ON mk.user_id = mb.user_id
          CROSS JOIN LATERAL (
            SELECT CASE WHEN x.whole THEN b.min_at ELSE (
                     SELECT min(p.at) FROM p
                     WHERE mb.from_at <= p.at AND p.at < mb.to_at AND p.actor_id <> mb.user_id
                       AND NOT ${heldBackOf('mb.user_id')}) END AS first_at,
                   CASE WHEN x.whole THEN b.max_i ELSE (
                     SELECT max(p.i) FROM p
                     WHERE mb.from_at <= p.at AND p.at < mb.to_at AND p.actor_id <> mb.user_id
                       AND NOT ${heldBackOf('mb.user_id')}) END AS newest_i
            FROM (SELECT mb.from_at <= b.min_at AND b.max_at < mb.to_at
                         AND mb.user_id <> ALL (b.authors) AND mk.user_id IS NULL AS whole) AS x
          ) AS f
          WHERE f.newest_i IS NOT NULL AND ($5::text[] IS NULL OR mb.user_id = ANY($5::text[]))
            AND ${IN_MEMBER_RANGE}
            AND NOT ${deletedUserSql('mb.user_id')}
          GROUP BY mb.user_id, b.verb, b.target_id`,
    params: [deliveries.communityId, only, ...range],
  };
}

/**
 * The records to write (`w`, rows in key order) written: updated where the statement's snapshot
 * read them, inserted where it did not; the rows written returned when `returning`.
 *
 * A record the snapshot read is computed from it (its countFrom, its latest action), so it is only
 * ever updated in place. Delete-all takes no group lock (postgres-records.ts) and may delete it
 * after the snapshot: the UPDATE then finds no row and the record stays deleted, as if the write
 * came first. An INSERT ... ON CONFLICT would meet no conflict and bring it back from the deleted
 * one, counting its actors (docs/tray-rules.md: a record re-created after delete-all counts afresh).
 * A record the snapshot did not read is counted from this write's actions alone; the row its
 * INSERT may meet is one expired at the tray's clock, which it replaces the same way. The two
 * touch different rows, and no other writer can insert one the snapshot did not read while the
 * group lock is held.
 */
function writeRecords(returning: boolean): string {
  const returned = returning ? RETURNING : '';
  const update = `UPDATE tray_records AS r SET
         target_type = w.target_type, target_name = w.target_name, parent_target_id = w.parent_target_id,
         last_action_id = w.last_action_id, last_action_segment_no = w.last_action_segment_no, feed = w.feed,
         mention_in = w.mention_in, actors = w.actors, actors_count = w.actors_count, count_from = w.cf,
         last_update = w.last_update, last_action_at = w.last_action_at, has_read = false,
         -- New activity brings the record back: unseen, out of the archive and the snooze.
         is_seen = false, archived_at = NULL, snoozed_until = NULL,
         unread_at = $2, changed_at = GREATEST(r.changed_at + 1, $2), expires_at = w.last_update + $3
       FROM w
       WHERE w.existed AND r.user_id = w.user_id AND r.key = w.key
       ${returned}`;
  const insert = `INSERT INTO tray_records AS r (user_id, key, verb, target_id, target_type, target_name,
       parent_target_id, last_action_id, last_action_segment_no, feed, mention_in, actors, actors_count,
       count_from, last_update, last_action_at, has_read, unread_at, changed_at, expires_at)
     SELECT user_id, key, verb, target_id, target_type, target_name, parent_target_id, last_action_id,
       last_action_segment_no, feed, mention_in, actors, actors_count, cf, last_update, last_action_at, false,
       $2, $2, last_update + $3
     FROM w
     WHERE NOT existed
     ORDER BY user_id, key
     ON CONFLICT (user_id, key) DO UPDATE SET
       target_type = excluded.target_type, target_name = excluded.target_name,
       parent_target_id = excluded.parent_target_id, last_action_id = excluded.last_action_id,
       last_action_segment_no = excluded.last_action_segment_no, feed = excluded.feed,
       mention_in = excluded.mention_in, actors = excluded.actors, actors_count = excluded.actors_count,
       count_from = excluded.count_from, last_update = excluded.last_update,
       last_action_at = excluded.last_action_at, has_read = false,
       is_seen = false, archived_at = NULL, snoozed_until = NULL,
       unread_at = excluded.unread_at, changed_at = GREATEST(r.changed_at + 1, excluded.changed_at),
       expires_at = excluded.expires_at
     ${returned}`;
  // A data-modifying CTE runs to completion whether read or not: without RETURNING the INSERT
  // can be the statement itself.
  return returning
    ? `updated AS (${update}),
     inserted AS (${insert})
     SELECT * FROM updated UNION ALL SELECT * FROM inserted`
    : `updated AS (${update})
     ${insert}`;
}

/**
 * The grouping core as one set-based statement: every recipient's record of the activities'
 * groups is recomputed from the group's actors and written, rows in key order, by an UPDATE of the
 * records the statement read and an INSERT ... ON CONFLICT DO UPDATE of the others (writeRecords). Per record (docs/tray-engine.md#records): countFrom
 * widens to the earliest action delivered (an expired record counts as none); the "latest action"
 * fields move only to a newer action (time, then action id), and lastUpdate to the newest action
 * delivered (never back; docs/tray-rules.md#inbox for one a removal named first); actors are the 3
 * newest of the group's actors at or after countFrom, the recipient excluded, and actorsCount
 * counts them all. A record that would not change is not written, so a redelivery leaves it (and
 * its read flag) as it is; one that changes turns unread at `now`. Nor is one that would be expired
 * at `now` (an expired record reads as none here, so otherwise a redelivery would rewrite it unread).
 *
 * The caller holds the groups' locks (lock-keys.ts) and has added the actions to the group
 * actors in the same transaction. Returns the records written when `returning`.
 */
export async function upsertGroupRecords(
  client: pg.PoolClient,
  activities: readonly Activity[],
  deliveries: Deliveries,
  options: { now: number; retentionMs: number; returning: boolean },
): Promise<InboxRecord[]> {
  if (activities.length === 0) return [];
  const { sql: deliveriesQuery, params } = deliveriesSql(deliveries, activities.length === 1);
  const result = await client.query<WrittenRow>({
    // Personal writes are many and small: planning this statement cost as much as running it on
    // 20 activities, so it is prepared once per connection (the same plan serves any activities).
    // A fan-out is planned each time, for its community and its number of posts.
    ...(deliveries.kind === 'personal'
      ? { name: options.returning ? 'tray_upsert_personal_returning' : 'tray_upsert_personal' }
      : {}),
    // Named first: pg_stat_activity shows a statement's first 1,024 bytes (track_activity_query_size),
    // where this one's mute spans CTE comes before its audience.
    text: `-- tray: grouped upsert, ${{ personal: 'personal', community: 'community fan-out', lateLeavers: 'late leavers' }[deliveries.kind]}
     WITH p AS (${ACTIVITIES}),
     -- The mute spans that could hold back an activity here or an action its groups count
     -- (held-back-sql.ts), and each of their owners with the latest end of theirs.
     mu AS MATERIALIZED (${deliveries.kind === 'personal' ? MUTES_OF_RECIPIENTS : MUTES_ON_TARGETS}),
     mk AS (SELECT m.user_id, max(${MUTE_END}) AS mute_end FROM mu AS m GROUP BY m.user_id),
     d AS (${deliveriesQuery}),
     -- Each group's actors, once per statement: the newest four (enough for three once the
     -- recipient is left out), and every actor's time in order (ats: how many, the oldest, and
     -- how many from any countFrom on). The groups are those of the activities (a few rows), not
     -- of the deliveries (as many as the members).
     g AS MATERIALIZED (
       SELECT k.verb, k.target_id, s.top, cardinality(s.ats) AS total, s.ats[1] AS min_at, s.ats, s.top3_min_at,
              coalesce(s.top3_ids, '{}') AS top3_ids,
              coalesce(s.top3, '[]'::jsonb)::json AS top3
       FROM (SELECT DISTINCT verb, target_id FROM p) AS k
       -- Only the newest four are built (four rows of tray_target_actors_newest); the count and
       -- the oldest time read the group's rows without building anything. Building every actor's
       -- snapshot to keep four took 250-300 ms for a group of 100,000 actors (a large
       -- community's posters, a viral post's reactors), once per statement: per fan-out part, and
       -- per job on such a post (BENCHMARKS.md); 14 ms this way.
       CROSS JOIN LATERAL (
         SELECT coalesce(jsonb_agg(a.snap ORDER BY a.n), '[]'::jsonb) AS top,
                jsonb_agg(a.snap ORDER BY a.n) FILTER (WHERE a.n <= 3) AS top3,
                array_agg(a.actor_id) FILTER (WHERE a.n <= 3) AS top3_ids,
                min(a.at) FILTER (WHERE a.n <= 3) AS top3_min_at,
                -- Read from the index alone, in its order; a few MB for a million actors.
                ${actorTimesSql('k.verb', 'k.target_id')} AS ats
         FROM (SELECT t.actor_id, t.at,
                      jsonb_strip_nulls(jsonb_build_object('userId', t.actor_id, 'name', t.name,
                        'imageUrl', t.image_url, 'avatarCustomUrl', t.avatar_custom_url,
                        'deleted', ${deletedMarkSql('t.actor_deleted')}, 'at', t.at)) AS snap,
                      row_number() OVER (ORDER BY t.at DESC, t.action_id DESC) AS n
               FROM (SELECT * FROM tray_target_actors t
                     WHERE t.target_id = k.target_id AND t.verb = k.verb
                     ORDER BY t.at DESC, t.action_id DESC LIMIT 4) AS t) AS a
       ) AS s
     ),
     j AS (
       SELECT d.user_id, tray_record_key(d.verb, d.target_id, d.user_id) AS key, d.verb, d.target_id,
              d.community_id, d.open_from,
              cur.user_id IS NOT NULL AS existed,
              (cur.user_id IS NULL OR (n.at, n.action_id COLLATE "C")
                 > (coalesce(cur.last_action_at, cur.last_update), cur.last_action_id)) AS newer,
              CASE WHEN cur.user_id IS NULL THEN d.first_at ELSE least(cur.count_from, d.first_at) END AS cf,
              n.target_type AS n_target_type, n.target_name AS n_target_name,
              n.parent_target_id AS n_parent_target_id, n.action_id AS n_action_id, n.seg AS n_seg,
              n.feed AS n_feed, n.mention_in AS n_mention_in, n.at AS n_at,
              cur.target_type AS c_target_type, cur.target_name AS c_target_name,
              cur.parent_target_id AS c_parent_target_id, cur.last_action_id AS c_action_id,
              cur.last_action_segment_no AS c_seg, cur.feed AS c_feed, cur.mention_in AS c_mention_in,
              cur.last_update AS c_at, cur.last_action_at AS c_action_at, cur.actors AS c_actors, cur.actors_count AS c_actors_count,
              cur.count_from AS c_count_from, mk.mute_end
       FROM d
       JOIN p AS n ON n.i = d.newest_i
       LEFT JOIN mk ON mk.user_id = d.user_id
       -- One primary-key probe per recipient, whatever the size of the table (never a scan of it).
       LEFT JOIN LATERAL (
         SELECT * FROM tray_records AS r
         WHERE r.user_id = d.user_id AND r.key = tray_record_key(d.verb, d.target_id, d.user_id)
           AND r.expires_at > $2
         LIMIT 1
       ) AS cur ON true
     ),
     -- A record of a community's target whose recipient was away at some time since its countFrom,
     -- or whose recipient has a mute on these targets that ends after it, counts exactly the
     -- actions of the rest of the time that no mute held back (exact-actors-sql.ts): computed once
     -- per such record (OFFSET 0 keeps the lateral from being inlined into each use), for those only.
     s AS (
       SELECT j.*, e.exact
       FROM j
       LEFT JOIN LATERAL (
         SELECT ${exactActorsSql({ user: 'j.user_id', verb: 'j.verb', target: 'j.target_id', community: 'j.community_id', countFrom: 'j.cf' })} AS exact
         WHERE (j.community_id IS NOT NULL AND CASE
           WHEN j.verb = 'post' THEN j.open_from IS NULL OR j.cf < j.open_from
           ELSE EXISTS (SELECT 1 FROM tray_member_away a
                        WHERE a.community_id = j.community_id AND a.user_id = j.user_id AND a.to_at > j.cf)
         END) OR j.mute_end > j.cf
         OFFSET 0
       ) AS e ON true
     ),
     v AS (
       SELECT j.*,
         CASE WHEN j.newer THEN j.n_target_type ELSE j.c_target_type END AS target_type,
         CASE WHEN j.newer THEN j.n_target_name ELSE j.c_target_name END AS target_name,
         CASE WHEN j.newer THEN j.n_parent_target_id ELSE j.c_parent_target_id END AS parent_target_id,
         CASE WHEN j.newer THEN j.n_action_id ELSE j.c_action_id END AS last_action_id,
         CASE WHEN j.newer THEN j.n_seg ELSE j.c_seg END AS last_action_segment_no,
         CASE WHEN j.newer THEN j.n_feed ELSE j.c_feed END AS feed,
         CASE WHEN j.newer THEN j.n_mention_in ELSE j.c_mention_in END AS mention_in,
         -- lastUpdate never moves back (a removal may have left it above the action named), and
         -- reaches every action delivered: one a removal named before it came (newer than
         -- lastUpdate, not newer than the action named) moves the record all the same.
         greatest(j.n_at, j.c_at) AS last_update,
         CASE WHEN j.newer THEN nullif(j.n_at, greatest(j.n_at, j.c_at))
              ELSE nullif(coalesce(j.c_action_at, j.c_at), greatest(j.n_at, j.c_at)) END AS last_action_at,
         -- Common case first: the group's newest three all from countFrom on, the recipient not
         -- among them, are the record's (whatever older actors it does not count).
         CASE WHEN j.exact IS NOT NULL THEN j.exact->'actors'
              WHEN j.cf <= g.top3_min_at AND NOT (j.user_id = ANY(g.top3_ids)) THEN g.top3
              ELSE (SELECT coalesce(jsonb_agg(s.e ORDER BY s.o), '[]'::jsonb)::json
                    FROM (SELECT e, o FROM jsonb_array_elements(g.top) WITH ORDINALITY AS x(e, o)
                          WHERE (e->>'at')::bigint >= j.cf AND e->>'userId' <> j.user_id
                          ORDER BY o LIMIT 3) AS s)
         END AS actors,
         -- The actors from countFrom on, by a binary search of the group's times (actors-since-sql.ts).
         CASE WHEN j.exact IS NOT NULL THEN (j.exact->>'count')::int
              ELSE ${actorsSinceSql({ summary: 'g', countFrom: 'j.cf', verb: 'j.verb', target: 'j.target_id', own: 'own' })}
         END AS actors_count
       FROM s AS j
       JOIN g ON g.verb = j.verb AND g.target_id = j.target_id
       LEFT JOIN tray_target_actors AS own
         ON own.target_id = j.target_id AND own.verb = j.verb AND own.actor_id = j.user_id
     ),
     -- The records to write: those that change and would not be expired at the tray's clock (a
     -- record expired then is never shown, docs/tray-engine.md#retention: a delivery that would
     -- leave one so, a replay or a spool drained long after, writes and tells nothing).
     w AS (
       SELECT * FROM v
       WHERE (NOT existed
          OR (target_type, target_name, parent_target_id, last_action_id, last_action_segment_no, feed::text,
              mention_in, actors::text, actors_count, cf, last_update, last_action_at)
             IS DISTINCT FROM
             (c_target_type, c_target_name, c_parent_target_id, c_action_id, c_seg, c_feed::text, c_mention_in,
              c_actors::text, c_actors_count, c_count_from, c_at, c_action_at))
         AND last_update + $3 > $2
       ORDER BY user_id, key
     ),
     ${writeRecords(options.returning)}`,
    values: [JSON.stringify(activityRows(activities)), options.now, options.retentionMs, ...params],
  });
  return written(result.rows, activities, options.now);
}

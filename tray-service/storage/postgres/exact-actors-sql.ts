import { heldBackSql } from './held-back-sql.ts';
import { deletedMarkSql } from './deleted-actor-sql.ts';
import { KEPT_ACTIONS_PER_ACTOR } from './personal-actions.ts';

/** The SQL expressions naming one recipient's record of a community's target. */
export interface RecordRef {
  user: string;
  verb: string;
  target: string;
  community: string;
  countFrom: string;
}

/**
 * A scalar subquery: what one recipient's record counts, exactly
 * (docs/tray-rules.md#leaving-and-rejoining-a-community, docs/tray-rules.md#inbox). The record
 * group's actions at or after the record's countFrom, by others than the recipient, that the
 * recipient was not away for (inside an away span, and the leave that opened it processed before
 * the action and before the join that let it in; a leave processed late takes nothing back, nor
 * does a join processed after it: tray_away_for for a post, tray_away_for_action for any other
 * action) and that none of the recipient's mutes held back
 * (held-back-sql.ts); each actor at their latest such action, as that action shows them. Read from
 * the community's kept posts (`post` records), the recipient's kept actions (every other verb on a
 * community's target, with the group's older ones past them) or the group's kept actions (a user
 * feed's targets, which no away span touches). Returns json `{actors, count, newest}`: the newest three snapshots in the text the
 * upsert writes (jsonb, printed as json), how many, and the newest counted action's activity (on a
 * user feed only its action's fields: id, segment, time, actor).
 *
 * Only records whose recipient was away at some time after countFrom (a member who left and came
 * back, or left), or has a mute that could cover one of the group's actions since then, need it;
 * every other record takes its group's actors as they are.
 */
export function exactActorsSql(ref: RecordRef): string {
  const { user, verb, target, community, countFrom } = ref;
  // The actions kept for the recipient are about an actor's newest KEPT_ACTIONS_PER_ACTOR: once
  // those are removed, or all fell while the recipient was away, the older ones the group still
  // keeps count, each judged by its time alone (processed last: their processing order is not kept).
  // Read only where some could have been pruned: an actor pruned still has KEPT_ACTIONS_PER_ACTOR
  // kept copies unless a removal took some (its tombstone names the post). Both asked once per
  // record: most records have neither, and pay a scan of their own kept copies, not a probe per
  // row of the group.
  const pruned = `UNION ALL
                      SELECT ga.actor_id, ga.at, ga.action_id, ${GROUP_ACTION_ACTIVITY}, ga.post_id,
                             ${PROCESSED_LAST}
                      FROM tray_group_actions ga
                      WHERE ${verb} <> 'post' AND ${community} IS NOT NULL AND ga.target_id = ${target}
                        AND ga.verb = ${verb} AND ga.recipient = ${user} AND ga.at >= ${countFrom}
                        AND (EXISTS (SELECT 1 FROM tray_personal_actions pc
                                     WHERE pc.user_id = ${user} AND pc.community_id = ${community}
                                       AND pc.verb = ${verb} AND pc.target_id = ${target}
                                     GROUP BY pc.actor_id HAVING count(*) >= ${KEPT_ACTIONS_PER_ACTOR})
                             OR EXISTS (SELECT 1 FROM tray_removals rm
                                        WHERE rm.post_id = (SELECT g1.post_id FROM tray_group_actions g1
                                                            WHERE g1.target_id = ${target} AND g1.verb = ${verb}
                                                            LIMIT 1)))
                        AND NOT EXISTS (SELECT 1 FROM tray_personal_actions pk
                                        WHERE pk.user_id = ${user} AND pk.community_id = ${community}
                                          AND pk.verb = ${verb} AND pk.target_id = ${target}
                                          AND pk.actor_id = ga.actor_id AND pk.action_id = ga.action_id
                                        -- A probe of the key per row: as an anti-join the planner,
                                        -- misled by its estimates, scanned the record's kept copies
                                        -- once per row of the group (rows x rows).
                                        OFFSET 0)`;
  return `(SELECT json_build_object(
      'actors', coalesce(jsonb_agg(c.snap ORDER BY c.n) FILTER (WHERE c.n <= 3), '[]'::jsonb)::json,
      'count', count(*),
      'newest', (array_agg(c.activity ORDER BY c.n))[1])
    FROM (SELECT l.snap, l.activity, row_number() OVER (ORDER BY l.at DESC, l.action_id DESC) AS n
          FROM (SELECT DISTINCT ON (s.actor_id) s.actor_id, s.at, s.action_id, s.activity,
                  jsonb_strip_nulls(jsonb_build_object('userId', s.actor_id,
                    'name', s.activity->'actor'->>'name', 'imageUrl', s.activity->'actor'->>'imageUrl',
                    'avatarCustomUrl', s.activity->'actor'->>'avatarCustomUrl',
                    'deleted', s.activity->'actor'->'deleted', 'at', s.at)) AS snap
                FROM (SELECT cp.actor_id, cp.at, cp.action_id, cp.activity, cp.action_id AS post_id,
                             cp.processed
                      FROM tray_community_posts cp
                      WHERE ${verb} = 'post' AND cp.community_id = ${target} AND cp.at >= ${countFrom}
                      UNION ALL
                      SELECT pa.actor_id, pa.at, pa.action_id, pa.activity,
                             CASE WHEN pa.verb IN ('comment', 'reaction') THEN pa.target_id
                                  ELSE pa.activity->>'parentTargetId' END,
                             pa.processed
                      FROM tray_personal_actions pa
                      WHERE ${verb} <> 'post' AND pa.user_id = ${user} AND pa.community_id = ${community}
                        AND pa.verb = ${verb} AND pa.target_id = ${target} AND pa.at >= ${countFrom}
                      ${pruned}
                      UNION ALL
                      SELECT ga.actor_id, ga.at, ga.action_id, ${GROUP_ACTION_ACTIVITY}, ga.post_id, 0::bigint
                      FROM tray_group_actions ga
                      WHERE ${community} IS NULL AND ga.target_id = ${target} AND ga.verb = ${verb}
                        AND ga.at >= ${countFrom}) AS s
                WHERE s.actor_id <> ${user}
                  AND NOT (EXISTS (SELECT 1 FROM tray_member_away a
                                   WHERE a.community_id = ${community} AND a.user_id = ${user}
                                     AND a.from_at <= s.at AND s.at < a.to_at)
                           AND CASE WHEN ${verb} = 'post' THEN tray_away_for(${community}, ${user}, s.at, s.processed)
                                    ELSE tray_away_for_action(${community}, ${user}, s.at, s.processed) END)
                  AND NOT ${heldBackSql({ user, actor: 's.actor_id', verb, post: 's.post_id', community, at: 's.at' })}
                ORDER BY s.actor_id, s.at DESC, s.action_id DESC) AS l) AS c)`;
}

/** A kept group action `ga` as the activity a count reads: its action's fields (id, segment, time, actor). */
const GROUP_ACTION_ACTIVITY = `jsonb_strip_nulls(jsonb_build_object('lastActionId', ga.action_id,
                               'lastActionSegmentNo', ga.seg, 'at', ga.at, 'actor', jsonb_build_object(
                                 'userId', ga.actor_id, 'name', ga.name, 'imageUrl', ga.image_url,
                                 'avatarCustomUrl', ga.avatar_custom_url,
                                 'deleted', ${deletedMarkSql('ga.actor_deleted')})))`;

/** Processed after every membership change: away or not by the action's time alone. */
const PROCESSED_LAST = '9223372036854775807::bigint';

/**
 * exactActorsSql of the tray_records row aliased `row`, with its community in `community_id`
 * (the recomputations after a leave and after a removal read their records so).
 */
export const exactActorsOfRow = (row: string) =>
  exactActorsSql({
    user: `${row}.user_id`,
    verb: `${row}.verb`,
    target: `${row}.target_id`,
    community: `${row}.community_id`,
    countFrom: `${row}.count_from`,
  });

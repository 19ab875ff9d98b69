import type pg from 'pg';
import type { Activity } from '../../domain/activity.ts';
import { deletedMarkSql } from './deleted-actor-sql.ts';

/**
 * Actions of one actor kept per record (recipient, verb, target): a record counted exactly finds
 * each actor's newest action the recipient was not away for among them, so an actor whose newest
 * 16 actions on one target all fell while the recipient was away, and an older one did not, is no
 * longer counted (docs/tray-rules.md#leaving-and-rejoining-a-community).
 */
export const KEPT_ACTIONS_PER_ACTOR = 16;

/**
 * Two data-modifying CTEs over the activities `p` (upsert-group-records.ts): keep each action on a
 * community's target addressed to one user in tray_personal_actions, once, as the activity the
 * mapping made (rebuilt from its columns), and prune each actor's older ones beyond
 * KEPT_ACTIONS_PER_ACTOR per record. The prune reads the rows as they were before the statement:
 * an actor keeps at most the newest 16 older ones plus what this statement adds, until their next
 * action prunes again. Actions on user feeds, community posts and a recipient's own actions are
 * not kept. `$2` is the retention in ms.
 */
export const KEEP_PERSONAL_ACTIONS = `kept AS (
       INSERT INTO tray_personal_actions
         (user_id, verb, target_id, actor_id, action_id, community_id, at, activity, expires_at)
       SELECT DISTINCT ON (recipient COLLATE "C", community_id COLLATE "C", verb COLLATE "C",
                           target_id COLLATE "C", actor_id COLLATE "C", action_id COLLATE "C")
         recipient, verb, target_id, actor_id, action_id, community_id, at,
         jsonb_strip_nulls(jsonb_build_object('verb', verb, 'targetId', target_id, 'targetType', target_type,
           'targetName', target_name, 'parentTargetId', parent_target_id, 'lastActionId', action_id,
           'lastActionSegmentNo', seg, 'feed', feed, 'mentionIn', mention_in,
           'actor', jsonb_build_object('userId', actor_id, 'name', name, 'imageUrl', image_url,
                                       'avatarCustomUrl', avatar_custom_url,
                                       'deleted', ${deletedMarkSql('actor_deleted')}),
           'at', at, 'audience', jsonb_build_object('kind', 'user', 'userId', recipient),
           'communityId', community_id)),
         at + $2
       FROM p
       WHERE community_id IS NOT NULL AND recipient IS NOT NULL AND recipient <> actor_id
       ORDER BY recipient COLLATE "C", community_id COLLATE "C", verb COLLATE "C", target_id COLLATE "C",
                actor_id COLLATE "C", action_id COLLATE "C"
       ON CONFLICT DO NOTHING
       RETURNING user_id, community_id, verb, target_id, actor_id),
     pruned AS (
       -- Each key's older rows by its own index scan, deleted by row address: never a pass over the table.
       DELETE FROM tray_personal_actions t
       WHERE t.ctid = ANY (ARRAY(
         SELECT o.ctid FROM (SELECT DISTINCT user_id, community_id, verb, target_id, actor_id FROM kept) AS k
         CROSS JOIN LATERAL (
           SELECT x.ctid FROM tray_personal_actions x
           WHERE x.user_id = k.user_id AND x.community_id = k.community_id AND x.verb = k.verb
             AND x.target_id = k.target_id AND x.actor_id = k.actor_id
           ORDER BY x.at DESC, x.action_id DESC OFFSET ${KEPT_ACTIONS_PER_ACTOR}) AS o)))`;

/**
 * The kept actions addressed to `userId` on `communityId`'s targets with a time in [from, to),
 * oldest first: what a join processed late adds besides the community's posts.
 */
export async function personalActionsInSpan(
  pool: pg.Pool,
  userId: string,
  communityId: string,
  from: number,
  to: number,
): Promise<Activity[]> {
  const found = await pool.query<{ activity: Activity }>(
    `SELECT activity FROM tray_personal_actions
     WHERE user_id = $1 AND community_id = $2 AND at >= $3 AND at < $4
     ORDER BY at, verb, target_id, action_id`,
    [userId, communityId, from, to],
  );
  return found.rows.map((row) => row.activity);
}

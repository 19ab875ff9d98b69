import { OPEN_END } from './postgres-memberships.ts';

/** The SQL expressions naming one personal delivery: an action addressed to one user. */
export interface PersonalDeliveryRef {
  user: string;
  community: string;
  verb: string;
  target: string;
  actor: string;
  action: string;
  at: string;
}

/**
 * A boolean SQL expression: whether the recipient was away from the community of the action's
 * target for it (docs/tray-rules.md#leaving-and-rejoining-a-community), the personal write's rule.
 * Only an action inside one of their away spans (tray_member_away, a superset) is judged, by
 * tray_away_for_action at the place the action took when first kept (tray_personal_actions by its
 * primary key): a redelivered one kept before a leave covering it still counts. One not kept takes
 * the largest place, after every stored change. False on a user feed (no community).
 */
export function personalAwaySql(ref: PersonalDeliveryRef): string {
  const { user, community, verb, target, actor, action, at } = ref;
  return `(EXISTS (SELECT 1 FROM tray_member_away a
             WHERE a.community_id = ${community} AND a.user_id = ${user}
               AND a.from_at <= ${at} AND ${at} < a.to_at)
           AND tray_away_for_action(${community}, ${user}, ${at}, coalesce(
             (SELECT k.processed FROM tray_personal_actions k
              WHERE k.user_id = ${user} AND k.community_id = ${community} AND k.verb = ${verb}
                AND k.target_id = ${target} AND k.actor_id = ${actor}
                AND k.action_id = ${action}), ${OPEN_END})))`;
}

import { KEPT_EXPIRY_INDEX, type CollectionSpec } from './collection-spec.ts';
import { TRAY_TARGET_ACTIONS } from './collection-names.ts';
import type { Activity } from '../../../domain/activity.ts';

/** tray_target_actions: every counted action of the retention window, with its time (target-actions.ts). */
export const trayTargetActionsCollection: CollectionSpec = {
  name: TRAY_TARGET_ACTIONS,
  indexes: [
    {
      name: 'action_group_actor',
      key: { group: 1, 'activity.actor.userId': 1, at: 1 },
      serves: 'find({group}) in readTargetActions: a record computed exactly from its group’s actions',
    },
    {
      name: 'action_group_processed',
      key: { group: 1, processed: 1 },
      serves:
        'find({group, processed: {$gt}}) in recomputeRacedLeaves: the community’s posts kept after a leave took its place',
    },
    {
      name: 'action_post_action',
      key: { postId: 1, 'activity.lastActionId': 1 },
      serves:
        'find({postId}) in applyRemovals: a deleted post’s thread; find({postId, activity.lastActionId}): a deleted comment or removed reaction itself; in purgeKeptTombstones: whether its thread still keeps any',
    },
    {
      name: 'action_member',
      key: { member: 1 },
      serves:
        'find({member}) in readMemberActions: a late join’s look-up, and a member’s records computed again',
    },
    {
      name: 'action_actor_user',
      key: { 'activity.actor.userId': 1 },
      serves: 'deleted user: updateMany({activity.actor.userId}) in renameKeptActor',
    },
    KEPT_EXPIRY_INDEX,
  ],
  // Its key, a prefix of action_post_action's, serves nothing that one does not.
  retiredIndexes: ['action_post'],
};

/**
 * One action a record may count, on a user feed or a community's target, kept for the records'
 * retention (it expires with the action, as its actor's entry in tray_target_actors does): a record
 * whose recipient was away or muted at some time since its countFrom is computed from these (group
 * actors keep each actor's latest action only), a removal computes its records again from those
 * left, a join or leave a write missed the member's records, and a late join adds those addressed
 * to the member.
 * Insert-only (atomic on FerretDB); nothing is pruned before it expires.
 */
export interface TargetActionDoc {
  /** JSON [group, action, recipient ('' for a community post)]: a redelivery inserts nothing. */
  _id: string;
  /** recordGroup(verb, targetId): a record's actions. */
  group: string;
  /**
   * The post the action belongs to (activity-post.ts): where a removal looks. Absent on actions
   * kept before removals existed (docs/storage.md#removals).
   */
  postId?: string;
  /** JSON [community, recipient] of an action addressed to one user: a join's and a leave's look-up. */
  member?: string;
  at: number;
  /**
   * The activity as the mapping made it: the actor as they acted (`activity.actor.userId` finds a
   * deleted user's snapshots), the record's latest-action fields.
   */
  activity: Activity;
  expiresAt: Date;
  /**
   * Its place in the order joins, leaves and kept actions were processed in (processing-order.ts),
   * taken when first kept. Absent on actions kept before the order was: those count as 1, after
   * every change stored then (docs/tray-rules.md#leaving-and-rejoining-a-community).
   */
  processed?: number;
}

import { EXPIRY_INDEX, type CollectionSpec } from '../setup/collection-spec.ts';
import { TRAY_TARGET_ACTIONS } from '../collection-names.ts';
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
      name: 'action_member',
      key: { member: 1 },
      serves: 'find({member}) in readMemberActions: a late join’s and a late leave’s look-up',
    },
    {
      name: 'action_actor_user',
      key: { 'activity.actor.userId': 1 },
      serves: 'deleted user: updateMany({activity.actor.userId}) in renameKeptActor',
    },
    EXPIRY_INDEX,
  ],
};

/**
 * One action a record may count, on a user feed or a community's target, kept for the records'
 * retention (it expires with the action, as its actor's entry in tray_target_actors does): a record
 * whose recipient was away or muted at some time since its countFrom is computed from these (group
 * actors keep each actor's latest action only), a removal computes its records again from those
 * left, a late leave the member's records, and a late join adds those addressed to the member.
 * Insert-only (atomic on FerretDB); nothing is pruned before it expires.
 */
export interface TargetActionDoc {
  /** JSON [group, action, recipient ('' for a community post)]: a redelivery inserts nothing. */
  _id: string;
  /** recordGroup(verb, targetId): a record's actions. */
  group: string;
  /** JSON [community, recipient] of an action addressed to one user: a join's and a leave's look-up. */
  member?: string;
  at: number;
  /**
   * The activity as the mapping made it: the actor as they acted (`activity.actor.userId` finds a
   * deleted user's snapshots), the record's latest-action fields.
   */
  activity: Activity;
  expiresAt: Date;
}

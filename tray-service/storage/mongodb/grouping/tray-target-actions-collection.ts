import { EXPIRY_INDEX, type CollectionSpec } from '../setup/collection-spec.ts';
import { TRAY_TARGET_ACTIONS } from '../collection-names.ts';
import type { Activity } from '../../../domain/activity.ts';

/** tray_target_actions: every action on a community's target, with its time (target-actions.ts). */
export const trayTargetActionsCollection: CollectionSpec = {
  name: TRAY_TARGET_ACTIONS,
  indexes: [
    {
      name: 'action_group_actor',
      key: { group: 1, 'activity.actor.userId': 1, at: 1 },
      serves:
        'find({group}) in readTargetActions; deleteMany({group, activity.actor.userId, at < kept}) pruning an actor’s oldest actions',
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
 * One action on a community's target, kept while records live: a record whose recipient was away
 * at some time since its countFrom is computed from these (group actors keep each actor's latest
 * action only), a late leave computes the member's records again from them, and a late join adds
 * those addressed to the member. Insert-only (atomic on FerretDB) with a prune of an actor's
 * oldest beyond 16 when a read finds them. Actions on user feeds are not kept.
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
   * deleted user's snapshots, and one actor's actions of a group for the prune), the record's
   * latest-action fields.
   */
  activity: Activity;
  expiresAt: Date;
}

import { EXPIRY_INDEX, type CollectionSpec } from '../setup/collection-spec.ts';
import { TRAY_TARGET_ACTIONS } from './target-actions.ts';

/** tray_target_actions: every action on a community's target, with its time (target-actions-store.ts). */
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

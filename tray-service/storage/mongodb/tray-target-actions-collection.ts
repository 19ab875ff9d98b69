import type { CollectionSpec } from './collection-spec.ts';
import { TRAY_TARGET_ACTIONS } from './target-actions-store.ts';

/** tray_target_actions: every action on a community's target, with its time (target-actions-store.ts). */
export const trayTargetActionsCollection: CollectionSpec = {
  name: TRAY_TARGET_ACTIONS,
  indexes: [
    {
      name: 'action_group',
      key: { group: 1 },
      serves: 'find({group}) in readTargetActions: a record computed with its recipient’s away time',
    },
    {
      name: 'action_group_actor',
      key: { groupActor: 1, at: 1 },
      serves: 'deleteMany({groupActor, at < kept}) pruning an actor’s oldest actions',
    },
    {
      name: 'action_member',
      key: { member: 1 },
      serves: 'find({member}) in readMemberActions: a late join’s and a late leave’s look-up',
    },
    {
      name: 'action_actor',
      key: { actorId: 1 },
      serves: 'deleted user: updateMany({actorId}) in renameKeptActor',
    },
    {
      name: 'action_expiry_day',
      key: { expiresDay: 1 },
      serves: 'deleteMany({expiresDay}) in purgeExpired',
    },
    {
      name: 'action_expiry',
      key: { expiresAt: 1 },
      expireAfterSeconds: 0,
      serves: 'the server’s TTL deletes on MongoDB',
    },
  ],
  equalityFields: ['group', 'groupActor', 'member', 'actorId', 'expiresDay'],
};

import { EXPIRY_INDEX, type CollectionSpec } from '../setup/collection-spec.ts';
import { TRAY_TARGET_ACTORS } from '../collection-names.ts';

/** tray_target_actors: each record group's distinct actors (target-actors-store.ts). */
export const trayTargetActorsCollection: CollectionSpec = {
  name: TRAY_TARGET_ACTORS,
  indexes: [
    {
      name: 'group_actor',
      key: { group: 1, 'actor.userId': 1, at: 1 },
      serves:
        'find({group}) in readGroupActors; deleteMany({group, actor.userId, at < latest}) pruning an actor’s older actions',
    },
    {
      name: 'actor_user',
      key: { 'actor.userId': 1 },
      serves: 'deleted user: updateMany({actor.userId}) in renameGroupActor',
    },
    EXPIRY_INDEX,
  ],
  retiredIndexes: ['group', 'actor', 'expiry_day'],
};

import type { CollectionSpec } from './collection-spec.ts';
import { TRAY_TARGET_ACTORS } from '../../../shared/tray/tray-record.ts';

/** tray_target_actors: each record group's distinct actors (target-actors-store.ts). */
export const trayTargetActorsCollection: CollectionSpec = {
  name: TRAY_TARGET_ACTORS,
  indexes: [
    { name: 'group', key: { group: 1 }, serves: 'find({group}) in readGroupActors' },
    {
      name: 'group_actor',
      key: { groupActor: 1, at: 1 },
      serves: 'deleteMany({groupActor, at < latest}) pruning an actor’s older actions',
    },
    { name: 'actor', key: { actorId: 1 }, serves: 'deleted user: updateMany({actorId}) in renameGroupActor' },
    {
      name: 'expiry',
      key: { expiresAt: 1 },
      expireAfterSeconds: 0,
      serves: 'expiry: the server’s TTL deletes, and deleteMany({expiresAt <= now}) in purgeExpired',
    },
  ],
};

import { KEPT_EXPIRY_INDEX, type CollectionSpec } from './collection-spec.ts';
import { TRAY_TARGET_ACTORS } from './collection-names.ts';
import type { ActorAction } from '../../../domain/actor-action.ts';

/** tray_target_actors: each record group's distinct actors (target-actors.ts). */
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
    KEPT_EXPIRY_INDEX,
  ],
  retiredIndexes: ['group', 'actor', 'expiry_day'],
};

/**
 * tray_target_actors: each record group's distinct actors, kept once per target instead of once
 * per recipient, so a post to a community of 10,000 writes one actor here and keeps each member's
 * record the same small size. Insert-only per action plus a prune of the actor's older actions
 * (readGroupActors):
 * inserts are atomic on FerretDB (its updates are not), so concurrent writers never lose the
 * newest action, and readers keep each actor's latest (groupActors).
 */
export interface TargetActorDoc extends ActorAction {
  /** JSON [group, actor, action]: a redelivered action inserts nothing. */
  _id: string;
  /** recordGroup(verb, targetId): a fan-out reads the whole group by equality. */
  group: string;
  expiresAt: Date;
  /**
   * Put back by a removal at the actor's newest kept action left, under an _id of its own (JSON
   * [group, actor, action, "refolded"]): the prune of older actions never deletes it
   * (repair-group-actors.ts).
   */
  refolded?: true;
}

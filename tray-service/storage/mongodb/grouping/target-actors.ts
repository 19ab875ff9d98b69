import type { Db } from 'mongodb';
import type { ActorInfo } from '../../../domain/activity.ts';
import { type ActorAction } from '../../../domain/actor-action.ts';
import { TRAY_TARGET_ACTORS } from '../collections/collection-names.ts';
import { groupActors, type GroupActors } from '../../../domain/group-actors.ts';
import { insertCoalesced } from '../driver/coalesced-writes.ts';
import { WHOLE_GROUP } from '../driver/whole-group.ts';
import type { TargetActorDoc } from '../collections/tray-target-actors-collection.ts';

/** One action to add to its record group's actors (recordGroupActions). */
export interface GroupAction {
  group: string;
  action: ActorAction;
  expiresAt: Date;
}

/**
 * Adds the actions to their groups' actors in one coalesced insert. One action per `_id`: the
 * activities of a post mentioning thousands share their group, actor and action, and a document
 * per activity was a command per mention (each only a duplicate of the first).
 */
export async function recordGroupActions(db: Db, actions: readonly GroupAction[]): Promise<void> {
  const docs = new Map<string, TargetActorDoc>();
  for (const { group, action, expiresAt } of actions) {
    const _id = JSON.stringify([group, action.actor.userId, action.actionId]);
    if (!docs.has(_id)) docs.set(_id, { _id, group, ...action, expiresAt });
  }
  if (docs.size > 0) await insertCoalesced<TargetActorDoc>(db, TRAY_TARGET_ACTORS, [...docs.values()]);
}

/**
 * The group's actors, each at their latest action. An actor's older actions, left by the insert,
 * are pruned here when the read finds them (an actor acting again on the same target), so the
 * common case (a first action) costs no delete. The prune never deletes the newest action,
 * whatever the interleaving: only strictly older ones go, and never one a removal put back
 * (`refolded`), which may be the newest by the time the delete runs (repair-group-actors.ts).
 */
export async function readGroupActors(db: Db, group: string): Promise<GroupActors> {
  const actions = db.collection<TargetActorDoc>(TRAY_TARGET_ACTORS);
  const docs = await actions
    .find(
      { group },
      { projection: { _id: 0, actor: 1, at: 1, actionId: 1, refolded: 1 }, batchSize: WHOLE_GROUP },
    )
    .toArray();
  const actors = groupActors(docs);
  if (docs.length > actors.actions.length) {
    const newest = new Map(actors.actions.map((action) => [action.actor.userId, action.at]));
    const stale = new Map<string, number>();
    for (const doc of docs) {
      const at = newest.get(doc.actor.userId);
      if (at !== undefined && doc.at < at && doc.refolded !== true) stale.set(doc.actor.userId, at);
    }
    for (const [userId, at] of stale)
      await actions.deleteMany({
        group,
        'actor.userId': userId,
        at: { $lt: at },
        refolded: { $exists: false },
      });
  }
  return actors;
}

/** Rewrites a deleted user's snapshot in every group they acted in to `as` (user.didDelete: deletedActor). */
export async function renameGroupActor(db: Db, as: ActorInfo): Promise<void> {
  await db
    .collection<TargetActorDoc>(TRAY_TARGET_ACTORS)
    .updateMany({ 'actor.userId': as.userId }, { $set: { actor: as } });
}

import type { Db } from 'mongodb';
import { compareActions } from '../../../domain/group-actors.ts';
import { showsDeleted } from '../../../domain/deleted-user.ts';
import type { ActorAction } from '../../../domain/actor-action.ts';
import { TRAY_TARGET_ACTIONS, TRAY_TARGET_ACTORS } from '../collections/collection-names.ts';
import { insertCoalesced } from '../driver/coalesced-writes.ts';
import { deleteByIds } from '../driver/delete-by-ids.ts';
import { WHOLE_GROUP } from '../driver/whole-group.ts';
import type { TargetActionDoc } from '../collections/tray-target-actions-collection.ts';
import type { TargetActorDoc } from '../collections/tray-target-actors-collection.ts';

type Dated = Pick<TargetActorDoc, '_id' | 'expiresAt'>;

/** Each actor's newest of `actions`. */
function newestByActor<T extends ActorAction>(actions: Iterable<T>): Map<string, T> {
  const newest = new Map<string, T>();
  for (const action of actions) {
    const seen = newest.get(action.actor.userId);
    if (!seen || compareActions(action, seen) > 0) newest.set(action.actor.userId, action);
  }
  return newest;
}

/**
 * Brings one group's actors (what every later delivery on its target counts and names) in line
 * with its kept actions once the voided actions are out of those: the voided actions' actor
 * documents go, and an actor left without their newest kept action among the actors is put back
 * at it. Needs only the group and the voided action ids, which the removal's work notes keep, so a
 * retry after a failure anywhere in a removal, and a write that added a voided action after the
 * removal ran (reapply-removals.ts), leave the same actors as a removal that ran alone.
 *
 * An actor put back gets a document of its own, marked `refolded`, that the readers' prune of
 * older actions never deletes (target-actors.ts): a reader that read the voided action as the
 * actor's newest would otherwise prune the older one this puts back. It lives until its expiry.
 *
 * `keepUntil`, the voided actions' latest expiry: the group's latest-expiring actor left takes it
 * (or the later expiry of the actor documents going) when it is sooner. A removal leaves a record's lastUpdate where it was, and the purge keeps a
 * group's documents until the latest expiry among its actors (purge-kept-actions.ts).
 *
 * Returns the users put back under their own name (a kept action not yet rewritten): a deletion
 * of one of them that ran after that read renamed what it found before this insert, and the
 * removal runs the deletion's rewrite again for them (reapply-deletions.ts).
 */
export async function repairGroupActors(
  db: Db,
  group: string,
  voided: ReadonlySet<string>,
  keepUntil?: Date,
): Promise<string[]> {
  const actors = db.collection<TargetActorDoc>(TRAY_TARGET_ACTORS);
  // Read by group and picked here, deleted by _id: FerretDB filters an $in over the whole collection.
  const docs = await actors
    .find({ group }, { projection: { refolded: 0 }, batchSize: WHOLE_GROUP })
    .toArray();
  const gone = docs.filter((doc) => voided.has(doc.actionId));
  const left = docs.filter((doc) => !voided.has(doc.actionId));
  const newestLeft = newestByActor(left);
  const newestGone = newestByActor(gone);
  const kept = await db
    .collection<TargetActionDoc>(TRAY_TARGET_ACTIONS)
    .find({ group }, { projection: { _id: 0, activity: 1, expiresAt: 1 }, batchSize: WHOLE_GROUP })
    .toArray();
  const keptActions = kept
    .filter(({ activity }) => !voided.has(activity.lastActionId))
    .map(({ activity, expiresAt }) => ({
      actor: activity.actor,
      at: activity.at,
      actionId: activity.lastActionId,
      expiresAt,
    }));
  const refolded: TargetActorDoc[] = [];
  for (const [userId, newest] of newestByActor(keptActions)) {
    const have = newestLeft.get(userId);
    const lost = newestGone.get(userId);
    const lostNewest = lost !== undefined && (have === undefined || compareActions(lost, have) > 0);
    if (!lostNewest && have !== undefined && compareActions(have, newest) >= 0) continue;
    refolded.push({
      _id: JSON.stringify([group, userId, newest.actionId, 'refolded']),
      group,
      actor: newest.actor,
      at: newest.at,
      actionId: newest.actionId,
      expiresAt: newest.expiresAt,
      refolded: true,
    });
  }
  if (refolded.length > 0) await insertCoalesced<TargetActorDoc>(db, TRAY_TARGET_ACTORS, refolded);
  if (keepUntil !== undefined) {
    // The documents going may hold a later expiry an earlier removal gave the group: it is moved
    // onto one left before they go, so a retry after the delete finds it there.
    let keep = keepUntil;
    for (const doc of gone) if (doc.expiresAt > keep) keep = doc.expiresAt;
    let latest: Dated | undefined;
    for (const doc of [...left, ...refolded]) if (!latest || doc.expiresAt > latest.expiresAt) latest = doc;
    // Marked refolded: the readers' prune deletes an actor's older documents once a newer action
    // of theirs arrives (a late one), and this one's expiry would go with it (target-actors.ts).
    if (latest && latest.expiresAt < keep)
      await actors.updateOne({ _id: latest._id }, { $set: { expiresAt: keep, refolded: true } });
  }
  await deleteByIds(
    db,
    TRAY_TARGET_ACTORS,
    gone.map((doc) => doc._id),
  );
  // One put back as deleted was read after the deletion rewrote it: nothing to run again (for a
  // deleted user with many actions, a sweep of every group and record they are in).
  return refolded.filter((doc) => !showsDeleted(doc.actor)).map((doc) => doc.actor.userId);
}

import type { Db } from 'mongodb';
import type { Activity } from '../../../domain/activity.ts';
import { compareActions } from '../../../domain/group-actors.ts';
import { TRAY_TARGET_ACTIONS, TRAY_TARGET_ACTORS } from '../collection-names.ts';
import { insertCoalesced } from '../compare-and-set/coalesced-writes.ts';
import { deleteByIds } from '../compare-and-set/delete-by-ids.ts';
import { WHOLE_GROUP } from '../compare-and-set/read-by-ids.ts';
import type { TargetActionDoc } from '../grouping/tray-target-actions-collection.ts';
import type { TargetActorDoc } from '../grouping/tray-target-actors-collection.ts';

/** A kept action a removal voids, as read by its post. */
export interface VoidedAction extends Pick<TargetActionDoc, '_id' | 'group' | 'activity' | 'expiresAt'> {
  postId: string;
}

const actorKey = (group: string, userId: string) => JSON.stringify([group, userId]);

/**
 * Takes the voided actions out of every collection that keeps actions: the kept actions, and the
 * group actors (each actor's latest action per group); an actor who lost their latest action is
 * put back at their newest kept action left, read by group. Inserts and deletes only, each
 * idempotent, so a retried removal (or two at once) leaves the same state, but for one update
 * that only ever moves an expiry later (renewGroups).
 */
export async function takeOutVoided(db: Db, voided: readonly VoidedAction[]): Promise<void> {
  if (voided.length === 0) return;
  await deleteByIds(
    db,
    TRAY_TARGET_ACTIONS,
    voided.map((action) => action._id),
  );
  const actorIds = new Set(
    voided.map(({ group, activity }) =>
      JSON.stringify([group, activity.actor.userId, activity.lastActionId]),
    ),
  );
  await deleteByIds(db, TRAY_TARGET_ACTORS, [...actorIds]);
  const lost = new Set(voided.map(({ group, activity }) => actorKey(group, activity.actor.userId)));
  const refolded = new Map<string, { activity: Activity; expiresAt: Date }>();
  for (const group of new Set(voided.map((action) => action.group))) {
    const left = await db
      .collection<TargetActionDoc>(TRAY_TARGET_ACTIONS)
      .find({ group }, { projection: { _id: 0, activity: 1, expiresAt: 1 }, batchSize: WHOLE_GROUP })
      .toArray();
    for (const kept of left) {
      const key = actorKey(group, kept.activity.actor.userId);
      if (!lost.has(key)) continue;
      const seen = refolded.get(key);
      const asAction = (activity: Activity) => ({ at: activity.at, actionId: activity.lastActionId });
      if (!seen || compareActions(asAction(kept.activity), asAction(seen.activity)) > 0)
        refolded.set(key, kept);
    }
  }
  const actors: TargetActorDoc[] = [...refolded].map(([key, { activity, expiresAt }]) => {
    const [group] = JSON.parse(key) as [string, string];
    return {
      _id: JSON.stringify([group, activity.actor.userId, activity.lastActionId]),
      group,
      actor: activity.actor,
      at: activity.at,
      actionId: activity.lastActionId,
      expiresAt,
    };
  });
  if (actors.length > 0) await insertCoalesced<TargetActorDoc>(db, TRAY_TARGET_ACTORS, actors);
  await renewGroups(db, voided);
}

/**
 * A removal leaves a record's lastUpdate where it was (the floor), above the newest action it still
 * counts when it took the newest one: the record lives until that lastUpdate + retention, and the
 * kept actions it counts must too. The purge keeps a group's documents until the latest expiry
 * among its actors (purge-kept-actions.ts), so the group's latest-expiring actor left takes the
 * voided actions' latest expiry when it is sooner (a group left with no actor has no record).
 */
async function renewGroups(db: Db, voided: readonly VoidedAction[]): Promise<void> {
  const keep = new Map<string, Date>();
  for (const { group, expiresAt } of voided) {
    const held = keep.get(group);
    if (!held || expiresAt > held) keep.set(group, expiresAt);
  }
  const actors = db.collection<TargetActorDoc>(TRAY_TARGET_ACTORS);
  for (const [group, expiresAt] of keep) {
    const left = await actors
      .find({ group }, { projection: { _id: 1, expiresAt: 1 }, batchSize: WHOLE_GROUP })
      .toArray();
    let latest: Pick<TargetActorDoc, '_id' | 'expiresAt'> | undefined;
    for (const doc of left) if (!latest || doc.expiresAt > latest.expiresAt) latest = doc;
    if (latest && latest.expiresAt < expiresAt)
      await actors.updateOne({ _id: latest._id }, { $set: { expiresAt } });
  }
}

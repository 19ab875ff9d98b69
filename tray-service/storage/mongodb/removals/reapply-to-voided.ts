import type { Db } from 'mongodb';
import { recordKey, type Activity } from '../../../domain/activity.ts';
import type { GroupingOptions } from '../grouping/write-deliveries.ts';
import { TRAY_RECORDS, TRAY_TARGET_ACTIONS } from '../collections/collection-names.ts';
import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';
import type { TargetActionDoc } from '../collections/tray-target-actions-collection.ts';
import { recordGroup } from '../records/storage-keys.ts';
import { readByIds } from '../compare-and-set/read-by-ids.ts';
import { reapplyRemovals } from './reapply-removals.ts';

/** What of a record tells whether it may count an action. */
type CountedFields = Pick<
  TrayRecordDoc,
  '_id' | 'userId' | 'countFrom' | 'lastActionId' | 'actors' | 'actorsCount'
>;

/** What of a kept action of the group tells whether it explains what a record shows. */
export interface KeptAction {
  actorId: string;
  at: number;
  lastActionId: string;
}

/**
 * Whether the record may count the voided action (pure), by what it shows and the group's other
 * kept actions: it names it as its latest; or shows its actor at its time, and no other kept
 * action of that actor at that time explains it; or it counts more actors than it shows (three)
 * and more than the kept actions from its counting start have, while the action's actor is not
 * shown, has no other kept action there, and would hide (no newer than the oldest shown). An
 * action before the record's counting start, or of its own recipient, is never counted.
 */
export function mayCount(record: CountedFields, voided: Activity, kept: readonly KeptAction[]): boolean {
  const { at, lastActionId } = voided;
  const actorId = voided.actor.userId;
  if (actorId === record.userId || at < record.countFrom) return false;
  if (record.lastActionId === lastActionId) return true;
  const others = kept.filter(
    (action) => action.lastActionId !== lastActionId && action.at >= record.countFrom,
  );
  const shown = record.actors.find((actor) => actor.userId === actorId);
  if (shown !== undefined)
    return shown.at === at && !others.some((action) => action.actorId === actorId && action.at === at);
  const oldest = record.actors.at(-1);
  const keptActors = new Set(
    others.flatMap((action) => (action.actorId === record.userId ? [] : [action.actorId])),
  );
  return (
    record.actorsCount > record.actors.length &&
    (oldest === undefined || at <= oldest.at) &&
    !keptActors.has(actorId) &&
    record.actorsCount > keptActors.size
  );
}

/**
 * The records a write of the voided activities could have made or changed that may count one of
 * them (mayCount), by the activity: its recipient's record for one addressed to a user (all of
 * them in one read), the group's members' records for a community's post; the kept actions once
 * per group, and only for a group with such a record.
 */
async function recordsCounting(db: Db, voided: readonly Activity[]): Promise<Map<Activity, Set<string>>> {
  const personal = await readByIds(
    db,
    voided.flatMap(({ verb, targetId, audience }) =>
      audience.kind === 'user' ? [recordKey(verb, targetId, audience.userId)] : [],
    ),
  );
  const members = new Map<string, Promise<CountedFields[]>>();
  const kept = new Map<string, Promise<KeptAction[]>>();
  const counting = new Map<Activity, Set<string>>();
  for (const activity of voided) {
    const { verb, targetId, audience } = activity;
    const group = recordGroup(verb, targetId);
    let candidates: CountedFields[];
    if (audience.kind === 'user') {
      const record = personal.get(recordKey(verb, targetId, audience.userId));
      candidates = record === undefined ? [] : [record];
    } else
      candidates = await once(members, group, () =>
        db.collection<TrayRecordDoc>(TRAY_RECORDS).find({ group }, { projection: COUNTED }).toArray(),
      );
    const actions = candidates.length === 0 ? [] : await once(kept, group, () => keptActions(db, group));
    counting.set(
      activity,
      new Set(candidates.filter((one) => mayCount(one, activity, actions)).map(({ _id }) => _id)),
    );
  }
  return counting;
}

/** What mayCount reads of a record. */
const COUNTED = { userId: 1, countFrom: 1, lastActionId: 1, actors: 1, actorsCount: 1 };

/** The group's kept actions, as mayCount reads them. */
async function keptActions(db: Db, group: string): Promise<KeptAction[]> {
  const docs = await db
    .collection<TargetActionDoc>(TRAY_TARGET_ACTIONS)
    .find({ group }, { projection: { at: 1, 'activity.actor.userId': 1, 'activity.lastActionId': 1 } })
    .toArray();
  return docs.map(({ at, activity: { actor, lastActionId } }) => ({
    actorId: actor.userId,
    at,
    lastActionId,
  }));
}

/** `read()` for `key` once, its answer kept in `cache`. */
function once<T>(cache: Map<string, Promise<T>>, key: string, read: () => Promise<T>): Promise<T> {
  const held = cache.get(key) ?? read();
  cache.set(key, held);
  return held;
}

/**
 * A write's activities that a kept removal voids (`all` without `live`) are a no-op, unless an
 * earlier try of the same write kept them (nothing here is one transaction): that try passed its
 * tombstone check before the removal was stored, kept the actions and maybe counted them, and
 * failed before its reapplyRemovals. The removal then either found nothing to void, or ran whole
 * between the try's keep and its record writes, taking the kept actions out and computing the
 * records before the try's landed. The retry cannot tell those from a write that never raced, so
 * the removal is applied again: what it finds still kept is taken out and its groups computed
 * again, and of the records every voided activity could have written (its recipient's, or every
 * member's for a community's post) those that may count it (mayCount) are computed again. A record
 * that cannot count it is left as it is: computing it again would apply what a plain redelivery
 * does not (a mute put since, dated back over an action the record counts), as the reference tray
 * and PostgreSQL, whose writes are transactions, never do. Only when something was voided, which is
 * rare on a first try: a retry, a redelivery, a replay or a late join's backfill of an event whose
 * target was removed since.
 */
export async function reapplyToVoided(
  db: Db,
  all: readonly Activity[],
  live: readonly Activity[],
  options: GroupingOptions,
): Promise<void> {
  const voided = all.filter((activity) => !live.includes(activity));
  if (voided.length === 0) return;
  const counting = await recordsCounting(db, voided);
  await reapplyRemovals(db, voided, options, undefined, (activity) => counting.get(activity) ?? new Set());
}

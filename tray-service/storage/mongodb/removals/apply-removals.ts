import { createHash } from 'node:crypto';
import type { Db, Filter } from 'mongodb';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { type Removal } from '../../../domain/removal.ts';
import { voidedByAny } from '../../../domain/removal-voids.ts';
import type { RemovedRecord } from '../../port.ts';
import { TRAY_REMOVAL_WORK, TRAY_TARGET_ACTIONS } from '../collections/collection-names.ts';
import { insertCoalesced } from '../driver/coalesced-writes.ts';
import { deleteByIds } from '../driver/delete-by-ids.ts';
import { recomputeGroupRecords, type GroupRecomputeOptions } from '../grouping/recompute-group-records.ts';
import type { RecomputeOptions } from '../grouping/recompute-member-records.ts';
import type { TargetActionDoc } from '../collections/tray-target-actions-collection.ts';
import { recordGroup } from '../records/storage-keys.ts';
import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';
import { recordCounts, removalChange, tallyRemovalChanges } from '../../../domain/removal-tray-change.ts';
import { countsUnkeptActions } from './kept-since.ts';
import { recordRemovalOutcome } from './removal-outcomes.ts';
import { repairGroupActors } from './repair-group-actors.ts';
import { reapplyDeletions } from '../grouping/reapply-deletions.ts';
import { takeOutVoided, type VoidedAction } from './take-out-voided.ts';
import { markApplied, storeTombstones } from './tombstones.ts';
import type { RemovalWorkDoc } from '../collections/tray-removal-work-collection.ts';

export interface RemovalOptions extends RecomputeOptions {
  /** everyActionKeptSince: records counting from before it are not computed again (kept-since.ts). */
  keptSince: number;
  /** The removal event's key: what this changes is recorded under it (removal-outcomes.ts). */
  eventKey?: string;
  /**
   * Voided action ids by record group that a concurrent write may have counted after this removal
   * took them out of the kept actions (reapply-removals.ts): those groups are computed again too.
   */
  counted?: ReadonlyMap<string, ReadonlySet<string>>;
  /**
   * For a group `counted` names and nothing else does (no work note, no deleted target), the keys
   * of the only records that write could have written there (a personal write's recipients'):
   * only those are computed again, not every member's record of a community's posts. A group
   * without an entry is computed whole.
   */
  countedRecords?: ReadonlyMap<string, ReadonlySet<string>>;
  /** Voided action ids one work note holds at most (VOIDED_PER_NOTE); smaller in tests. */
  voidedPerNote?: number;
}

/**
 * Voided action ids one work note lists at most: a post deleted with hundreds of thousands of
 * reactions kept would otherwise make one note past MongoDB's 16 MiB document limit (ids are up to
 * 128 characters: 40,000 of them are about 5.5 MiB), which the driver refuses on every retry.
 */
export const VOIDED_PER_NOTE = 40_000;

/**
 * The filters that find every kept action a removal may void (removalVoids), each served by an
 * index: a deleted post's whole thread by its post (`action_post_action`); a comment or reaction
 * itself by its post and action id, and what is on a comment (replies, reactions, mentions in it)
 * by the comment's groups (`action_group_actor`). An unlike read every action kept on its post,
 * 100,000 on a popular one, to find its own. One find each: FerretDB filters an $or or $in over
 * the whole collection.
 */
function candidateFilters(removal: Removal): Filter<TargetActionDoc>[] {
  const { postId, id } = removal;
  switch (removal.kind) {
    case 'post':
      return [{ postId }];
    case 'reaction':
      return [{ postId, 'activity.lastActionId': id }];
    case 'comment':
      return [{ postId, 'activity.lastActionId': id }, ...targetGroups(removal).map((group) => ({ group }))];
  }
}

/** The kept actions the removals void, each once, with what the removal notes of each. */
async function voidedActions(
  db: Db,
  removals: readonly Removal[],
  postIds: readonly string[],
): Promise<VoidedAction[]> {
  const actions = db.collection<TargetActionDoc>(TRAY_TARGET_ACTIONS);
  // On the removals' posts only, as a removal's work is noted and looked up by its post.
  const posts = new Set(postIds);
  const found = new Map<string, VoidedAction>();
  for (const removal of removals)
    for (const filter of candidateFilters(removal)) {
      const docs = await actions
        .find(filter, { projection: { _id: 1, group: 1, activity: 1, expiresAt: 1, postId: 1 } })
        .toArray();
      for (const { _id, group, activity, expiresAt, postId } of docs)
        if (!found.has(_id) && postId !== undefined && posts.has(postId) && voidedByAny(removals, activity))
          found.set(_id, { _id, group, activity, expiresAt, postId });
    }
  return [...found.values()];
}

/**
 * The work documents of the voided actions: per record group and post, `perNote` ids at most
 * each (VOIDED_PER_NOTE), in id order, so a retry that voids the same actions notes the same.
 */
function workOf(voided: readonly VoidedAction[], expiresAt: Date, perNote: number): RemovalWorkDoc[] {
  const byGroup = new Map<string, { postId: string; group: string; ids: Set<string>; keepUntil: Date }>();
  for (const { group, activity, postId, expiresAt: until } of voided) {
    const key = JSON.stringify([postId, group]);
    const entry = byGroup.get(key) ?? { postId, group, ids: new Set<string>(), keepUntil: until };
    entry.ids.add(activity.lastActionId);
    if (until > entry.keepUntil) entry.keepUntil = until;
    byGroup.set(key, entry);
  }
  return [...byGroup.values()].flatMap(({ postId, group, ids, keepUntil }) => {
    const sorted = [...ids].sort();
    const notes: RemovalWorkDoc[] = [];
    for (let start = 0; start < sorted.length; start += perNote) {
      const part = sorted.slice(start, start + perNote);
      const _id = createHash('sha256')
        .update(JSON.stringify([postId, group, part]))
        .digest('base64url');
      notes.push({ _id, postId, group, voided: part, keepUntil, expiresAt });
    }
    return notes;
  });
}

/** The groups whose whole target a removal deletes: the records there go, whatever they count. */
function targetGroups(removal: Removal): string[] {
  switch (removal.kind) {
    case 'post':
      return ['comment', 'reaction', 'mention'].map((verb) => recordGroup(verb, removal.id));
    case 'comment':
      return ['mentreply', 'mentreact', 'mention'].map((verb) => recordGroup(verb, removal.id));
    case 'reaction':
      return [];
  }
}

/** Whether the removals delete the record's target itself (every action it could count). Pure. */
const targetRemoved = (removals: readonly Removal[], record: TrayRecordDoc) =>
  voidedByAny(removals, {
    verb: record.verb,
    targetId: record.targetId,
    ...(record.parentTargetId === undefined ? {} : { parentTargetId: record.parentTargetId }),
    ...(record.mentionIn === undefined ? {} : { mentionIn: record.mentionIn }),
    // No action of the target's own: only what voids the target itself matches.
    lastActionId: '',
  });

/**
 * What becomes of a record the kept actions cannot tell (one counting from before every action was
 * kept, kept-since.ts): deleted when the removals deleted its own target, otherwise left as it is.
 */
const untoldBy =
  (removals: readonly Removal[], keptSince: number) =>
  (record: TrayRecordDoc): 'delete' | 'unchanged' | undefined =>
    countsUnkeptActions(record, keptSince)
      ? targetRemoved(removals, record)
        ? 'delete'
        : 'unchanged'
      : undefined;

/**
 * The records of `groups` computed again from the kept actions, after `removals` (stored and maybe
 * still running) that a write of these groups raced (reapply-removals.ts): no step of the removals
 * is run again. If a removal has taken its actions out, this reads what it left; if not yet, its
 * own computation of the records comes later and finds what the write wrote. Returns the records
 * deleted.
 */
export async function recomputeRacedGroups(
  db: Db,
  removals: readonly Removal[],
  groups: Iterable<string>,
  options: RecomputeOptions & { keptSince: number },
): Promise<RemovedRecord[]> {
  const removed: RemovedRecord[] = [];
  const untold = untoldBy(removals, options.keptSince);
  for (const group of groups)
    removed.push(...(await recomputeGroupRecords(db, group, new Set(), { ...options, untold })));
  return removed;
}

/**
 * Removals on MongoDB (docs/storage.md#removals), whole per batch: the tombstones are stored first
 * (an action arriving from then on is a no-op: tombstones.ts), the kept actions on the removals'
 * posts read by post and those the domain's rule voids (removal.ts) noted as work per record group,
 * then taken out of the kept actions (take-out-voided.ts); for each group noted (by this try, an
 * earlier one, or a write that counted a voided action: `counted`) the group actors are brought in
 * line with the kept actions left (repair-group-actors.ts) and every record computed again from
 * them (recomputeGroupRecords: compare-and-set, a thousand record
 * updates a bulk, a record left with nothing deleted). The work notes go last: a retry after a
 * failure finds what is still to do though the actions are gone, and a removal redelivered after
 * success finds nothing and changes nothing. Records counting from before this database kept every
 * action keep their actors, unless their own target was deleted (then they go). Returns the records
 * deleted, each told to onRemoved as soon as it is gone (a later group may fail, and the retry finds
 * it gone); those changed are told to onWritten. With `eventKey`, what it changed (each record as
 * first read and as last written) is recorded under it before the work notes go (removal-outcomes.ts).
 */
export async function applyRemovals(
  db: Db,
  removals: readonly Removal[],
  options: RemovalOptions,
): Promise<RemovedRecord[]> {
  if (removals.length === 0) return [];
  const now = options.now();
  await storeTombstones(db, removals, { now, retentionDays: options.retentionDays });
  const postIds = [...new Set(removals.map((removal) => removal.postId))];
  const voided = await voidedActions(db, removals, postIds);
  const expiresAt = new Date(now + options.retentionDays * DAY_MS);
  const noted = workOf(voided, expiresAt, options.voidedPerNote ?? VOIDED_PER_NOTE);
  if (noted.length > 0) await insertCoalesced<RemovalWorkDoc>(db, TRAY_REMOVAL_WORK, noted);
  const takenOut = await takeOutVoided(db, voided);

  // This removal's work, and any an earlier try (or a concurrent removal on these posts) left.
  const work = new Map(noted.map((doc) => [doc._id, doc]));
  for (const postId of postIds)
    for (const doc of await db.collection<RemovalWorkDoc>(TRAY_REMOVAL_WORK).find({ postId }).toArray())
      work.set(doc._id, doc);
  const groups = new Map<string, Set<string>>();
  const keepUntil = new Map<string, Date>();
  const note = (group: string, ids: Iterable<string>) =>
    groups.set(group, new Set([...(groups.get(group) ?? []), ...ids]));
  for (const { group, voided: ids, keepUntil: until } of work.values()) {
    note(group, ids);
    const held = keepUntil.get(group);
    if (until && (!held || until > held)) keepUntil.set(group, until);
  }
  // Groups this removal's own work (or an earlier try's) names are computed whole.
  const whole = new Set(groups.keys());
  for (const [group, ids] of options.counted ?? []) note(group, ids);
  // Records no kept action reaches may be on a deleted target: looked up by their group too.
  if (options.keptSince > 0)
    for (const group of removals.flatMap(targetGroups)) {
      groups.set(group, groups.get(group) ?? new Set());
      whole.add(group);
    }
  const onlyOf = (group: string) => (whole.has(group) ? undefined : options.countedRecords?.get(group));

  const untold = untoldBy(removals, options.keptSince);
  const removed: RemovedRecord[] = [];
  // Each record as first read and as last written: what the event detail shows of this removal.
  const before = new Map<string, TrayRecordDoc>();
  const after = new Map<string, TrayRecordDoc>();
  const recompute: GroupRecomputeOptions = {
    ...options,
    untold,
    onRead: (record) => {
      if (!before.has(record._id)) before.set(record._id, record);
    },
    onWritten: async (records) => {
      for (const record of records) after.set(record._id, record);
      await options.onWritten?.(records);
    },
  };
  const putBack = new Set<string>();
  for (const [group, ids] of groups) {
    if (ids.size > 0)
      for (const userId of await repairGroupActors(db, group, ids, keepUntil.get(group))) putBack.add(userId);
    for (const record of await recomputeGroupRecords(db, group, ids, recompute, onlyOf(group))) {
      after.delete(record.key);
      removed.push(record);
    }
  }
  // An actor put back under the name their kept action held, deleted meanwhile: the deletion may
  // have renamed what it read before the actor came back (repair-group-actors.ts).
  await reapplyDeletions(db, putBack, {
    owner: options.owner,
    now: options.now,
    onWritten: recompute.onWritten,
  });
  if (options.eventKey !== undefined) {
    const changes = [...after.values(), ...removed].flatMap((record) => {
      const key = 'key' in record ? record.key : record._id;
      const first = before.get(key);
      const last = 'key' in record ? undefined : recordCounts(record);
      return first ? [removalChange({ userId: first.userId, key }, recordCounts(first), last)] : [];
    });
    await recordRemovalOutcome(
      db,
      options.eventKey,
      { voided: takenOut, tally: tallyRemovalChanges(changes) },
      expiresAt,
    );
  }
  await deleteByIds(db, TRAY_REMOVAL_WORK, [...work.keys()]);
  await markApplied(db, removals);
  return removed;
}

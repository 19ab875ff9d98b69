import type { Db } from 'mongodb';
import type { Activity } from '../../../domain/activity.ts';
import type { Mute } from '../../../domain/mute.ts';
import { casUpdateRecords, type RecordSnapshot } from '../compare-and-set/cas-update-records.ts';
import { claimVersions } from '../compare-and-set/claim-versions.ts';
import { MAX_BULK_OPERATIONS } from '../driver/coalesced-writes.ts';
import { readByIds } from '../compare-and-set/read-by-ids.ts';
import { StalledRounds } from '../compare-and-set/stalled-rounds.ts';
import { TRAY_RECORDS } from '../collections/collection-names.ts';
import { membersSpans, type MemberSpans } from '../memberships/membership-changes.ts';
import { notHeldBack, spansCovering } from '../mutes/muted-deliveries.ts';
import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';
import { readRecordGroup } from './read-record-group.ts';
import type { RecomputeOptions } from './recompute-member-records.ts';
import type { RemovedRecord } from '../../port.ts';
import { decodeRecordKey } from '../../../domain/record-key.ts';
import { shrinkRecord } from './shrink-record.ts';
import { communityOf, readTargetActions } from './target-actions.ts';

export interface GroupRecomputeOptions extends RecomputeOptions {
  /**
   * What becomes of a record its group's kept actions cannot tell (one that counts actions kept by
   * no one: docs/storage.md#removals) instead of being computed again; undefined: computed again.
   */
  untold?: (record: TrayRecordDoc) => 'delete' | 'unchanged' | undefined;
  /** Told of each unexpired record as read, before it is computed (in every round). */
  onRead?: (record: TrayRecordDoc) => void;
}

/**
 * Computes every unexpired record of one record group (or of its records `only` names) again from
 * the group's kept actions without `voided` (action ids: what a removal takes out;
 * docs/tray-rules.md#inbox), each without what its recipient's mutes held back and, on a
 * community's target, what fell while they were away (shrinkRecord). Changed records are written
 * by compare-and-set with the kept actions, the community's members and the recipients' mute spans read again each round; a record left with no
 * action is deleted once its next version is claimed, so no concurrent writer's change is lost
 * unseen. Only the records whose deletion a concurrent writer stopped are read and computed again,
 * by `_id`; one deleted meanwhile is done. Whether the voided actions are still kept or already
 * taken out makes no difference. Idempotent. Returns the records deleted, each told to
 * onRemoved as it went (the others written are told to onWritten).
 */
export async function recomputeGroupRecords(
  db: Db,
  group: string,
  voided: ReadonlySet<string>,
  options: GroupRecomputeOptions,
  only?: ReadonlySet<string>,
): Promise<RemovedRecord[]> {
  // `only`: the group's records by these keys, not the whole group (those a personal write made).
  const read = only ? () => readByIds(db, [...only]) : () => readRecordGroup(db, group);
  const first = await read();
  let emptied = await recomputeOnce(db, group, voided, options, first, read);
  const deleted: RemovedRecord[] = [];
  const rounds = new StalledRounds(`records of ${group}`, options);
  while (emptied.size > 0) {
    const gone = new Set(await deleteFromVersions(db, emptied, options.owner));
    const removed = removedRecords(gone);
    for (const key of removed) deleted.push(key);
    if (removed.length > 0) await options.onRemoved?.(removed);
    const left = [...emptied.keys()].filter((key) => !gone.has(key));
    if (left.length === 0) break;
    // A claim lost to a writer that moves the record (or deletes it) is progress: only a record
    // whose version stays put under someone else's claim counts towards giving up.
    await rounds.wait();
    const current = await readByIds(db, left);
    rounds.count(gone.size > 0 || left.some((key) => current.get(key)?.version !== emptied.get(key)));
    emptied = await recomputeOnce(db, group, voided, options, current, (keys) => readByIds(db, keys));
  }
  return deleted;
}

/** The deleted records' users and keys, as onRemoved takes them. */
function removedRecords(keys: Iterable<string>): RemovedRecord[] {
  return [...keys].flatMap((key) => {
    const identity = decodeRecordKey(key);
    return identity ? [{ userId: identity.userId, key }] : [];
  });
}

/** One compare-and-set pass; returns the records computed empty, with the version they were read at. */
async function recomputeOnce(
  db: Db,
  group: string,
  voided: ReadonlySet<string>,
  options: GroupRecomputeOptions,
  first: RecordSnapshot,
  read: (keys: readonly string[]) => Promise<RecordSnapshot>,
): Promise<Map<string, number>> {
  let actions: Activity[] = [];
  let members = new Map<string, MemberSpans>();
  let mutes = new Map<string, Mute[]>();
  const emptied = new Map<string, number>();
  const users = new Set([...first.values()].map((record) => record.userId));
  await casUpdateRecords(
    db,
    [...first.keys()],
    (key, current) => {
      emptied.delete(key);
      if (!current || current.expiresAt.getTime() <= options.now()) return 'unchanged';
      options.onRead?.(current);
      const counted = notHeldBack(actions, mutes.get(current.userId) ?? []);
      const untold = options.untold?.(current);
      if (untold === 'unchanged') return 'unchanged';
      const next = untold ?? shrinkRecord(current, counted, members.get(current.userId)?.edges ?? []);
      if (next !== 'delete') return next;
      emptied.set(key, current.version);
      return 'unchanged';
    },
    {
      owner: options.owner,
      now: options.now,
      first,
      read,
      ...(options.onWritten ? { onWritten: options.onWritten } : {}),
      // Read after the records, as every write does: a round never computes from actions older than them.
      refresh: async () => {
        actions = (await readTargetActions(db, group)).filter((action) => !voided.has(action.lastActionId));
        const [action] = actions;
        const communityId = action === undefined ? undefined : communityOf(action);
        // The records' users' spans: by member for a group of a few (a reaction's, a comment's), the
        // community whole only for one of many (its posts' records).
        members = communityId === undefined ? new Map() : await membersSpans(db, communityId, users);
        mutes = await spansCovering(db, actions, users);
      },
    },
  );
  return emptied;
}

/**
 * Deletes records at the versions they were computed empty from, once their next version is
 * claimed (a claim lost to a concurrent writer leaves the record for the next round). Returns the
 * keys deleted.
 */
async function deleteFromVersions(
  db: Db,
  emptied: ReadonlyMap<string, number>,
  owner: string,
): Promise<string[]> {
  const won = await claimVersions(
    db,
    [...emptied].map(([recordId, version]) => ({ recordId, version: version + 1, state: 'deleted' })),
    { takeoverMs: 60_000, owner },
  );
  return deleteVersions(
    db,
    [...emptied].filter(([key]) => won.has(key)),
  );
}

/**
 * Deletes records at the versions read, a thousand single-document `deleteMany`s a bulk; a bulk
 * that deleted fewer than it named is followed by point reads of which are still there. Returns
 * the keys deleted.
 */
async function deleteVersions(db: Db, wanted: readonly [string, number][]): Promise<string[]> {
  const records = db.collection<TrayRecordDoc>(TRAY_RECORDS);
  const deleted: string[] = [];
  for (let start = 0; start < wanted.length; start += MAX_BULK_OPERATIONS) {
    const chunk = wanted.slice(start, start + MAX_BULK_OPERATIONS);
    const result = await records.bulkWrite(
      chunk.map(([_id, version]) => ({ deleteMany: { filter: { _id, version } } })),
      { ordered: false },
    );
    const keys = chunk.map(([key]) => key);
    if (result.deletedCount === chunk.length) deleted.push(...keys);
    else {
      const left = await readByIds(db, keys);
      deleted.push(...keys.filter((key) => !left.has(key)));
    }
  }
  return deleted;
}

import type { Db } from 'mongodb';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Activity } from '../../../domain/activity.ts';
import type { Mute } from '../../../domain/mute.ts';
import { casUpdateRecords } from '../compare-and-set/cas-update-records.ts';
import { claimVersions } from '../compare-and-set/claim-versions.ts';
import { MAX_BULK_OPERATIONS } from '../compare-and-set/coalesced-writes.ts';
import { readByIds } from '../compare-and-set/read-by-ids.ts';
import { TRAY_RECORDS } from '../collection-names.ts';
import { communityMembers, type MemberSpans } from '../memberships/membership-changes.ts';
import { notHeldBack, spansCovering } from '../mutes/muted-deliveries.ts';
import type { TrayRecordDoc } from '../records/tray-records-collection.ts';
import { readRecordGroup } from './read-record-group.ts';
import type { RecomputeOptions } from './recompute-member-records.ts';
import { shrinkRecord } from './shrink-record.ts';
import { communityOf, readTargetActions } from './target-actions.ts';

/** Rounds of reading, claiming and deleting the records left with no action (the job retries). */
const DELETE_ROUNDS = 20;

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
 * Computes every unexpired record of one record group again from the group's kept actions without
 * `voided` (action ids: what a removal takes out; docs/tray-rules.md#inbox), each without what its
 * recipient's mutes held back and, on a community's target, what fell while they were away
 * (shrinkRecord). Changed records are written by compare-and-set with the kept actions, the
 * community's members and the recipients' mute spans read again each round; a record left with no
 * action is deleted once its next version is claimed, so no concurrent writer's change is lost
 * unseen. Whether the voided actions are still kept or already taken out makes no difference.
 * Idempotent. Returns the keys of the records deleted (the others written are told to onWritten).
 */
export async function recomputeGroupRecords(
  db: Db,
  group: string,
  voided: ReadonlySet<string>,
  options: GroupRecomputeOptions,
): Promise<string[]> {
  const deleted: string[] = [];
  for (let round = 1; round <= DELETE_ROUNDS; round++) {
    if (round > 1) await sleep(Math.random() * Math.min(5 * round, 100));
    const emptied = await recomputeOnce(db, group, voided, options);
    if (emptied.size === 0) return deleted;
    // Deleted from the version computed empty: a writer that moved one meanwhile sends it round again.
    const won = await claimVersions(
      db,
      [...emptied].map(([recordId, version]) => ({ recordId, version: version + 1, state: 'deleted' })),
      { takeoverMs: 60_000, owner: options.owner },
    );
    const claimed = [...emptied].filter(([key]) => won.has(key));
    const gone = await deleteVersions(db, claimed);
    deleted.push(...gone);
    // Every one deleted from the version computed: nothing to compute again (a whole group's read).
    if (gone.length === emptied.size) return deleted;
  }
  throw new Error(`records of ${group} still contended after ${DELETE_ROUNDS} rounds of recomputation`);
}

/** One compare-and-set pass; returns the records computed empty, with the version they were read at. */
async function recomputeOnce(
  db: Db,
  group: string,
  voided: ReadonlySet<string>,
  options: GroupRecomputeOptions,
): Promise<Map<string, number>> {
  const first = await readRecordGroup(db, group);
  let actions: Activity[] = [];
  let members = new Map<string, MemberSpans>();
  let mutes = new Map<string, Mute[]>();
  const emptied = new Map<string, number>();
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
      const next = untold ?? shrinkRecord(current, counted, members.get(current.userId)?.away ?? []);
      if (next !== 'delete') return next;
      emptied.set(key, current.version);
      return 'unchanged';
    },
    {
      owner: options.owner,
      now: options.now,
      first,
      read: () => readRecordGroup(db, group),
      ...(options.onWritten ? { onWritten: options.onWritten } : {}),
      // Read after the records, as every write does: a round never computes from actions older than them.
      refresh: async () => {
        actions = (await readTargetActions(db, group)).filter((action) => !voided.has(action.lastActionId));
        const [action] = actions;
        const communityId = action === undefined ? undefined : communityOf(action);
        members = communityId === undefined ? new Map() : await communityMembers(db, communityId);
        mutes = await spansCovering(db, actions, new Set([...first.values()].map((record) => record.userId)));
      },
    },
  );
  return emptied;
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

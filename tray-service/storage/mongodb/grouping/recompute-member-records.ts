import type { Db } from 'mongodb';
import { recordGroup } from '../records/storage-keys.ts';
import { TRAY_RECORDS } from '../collections/collection-names.ts';
import { type TrayRecordDoc } from '../collections/tray-records-collection.ts';
import { recordKey, type Activity } from '../../../domain/activity.ts';
import type { MembershipEdge } from '../../../domain/membership-intervals.ts';
import { recomputeRecord } from './apply-activity.ts';
import { casUpdateRecords } from '../compare-and-set/cas-update-records.ts';
import { claimVersions } from '../compare-and-set/claim-versions.ts';
import { StalledRounds, type StallOptions } from '../compare-and-set/stalled-rounds.ts';
import { memberChangesFingerprint, memberSpans } from '../memberships/membership-changes.ts';
import { readByIds } from '../compare-and-set/read-by-ids.ts';
import { readMemberActions, readTargetActions } from './target-actions.ts';
import type { Mute } from '../../../domain/mute.ts';
import type { RemovedRecord } from '../../port.ts';
import { notHeldBack, spansOfUser } from '../mutes/muted-deliveries.ts';

/** `backOff` (StallOptions): the wait between rounds at a record a concurrent writer holds. */
export interface RecomputeOptions extends StallOptions {
  retentionDays: number;
  /** The job's dedupe key (owner of its write claims). */
  owner: string;
  now: () => number;
  onWritten?: (records: readonly TrayRecordDoc[]) => Promise<void>;
  /**
   * Told of the records deleted, as soon as they are: a later step of the same job may fail, and
   * its retry finds them gone (nothing left to tell), so a deletion told only at the end was never
   * told to live streams or the removal log.
   */
  onRemoved?: (records: readonly RemovedRecord[]) => Promise<void>;
}

/** A write's options (GroupingOptions) as its recomputations take them: its clock, claims and listeners. */
export const recomputeOptionsOf = (options: {
  retentionDays: number;
  owner: string;
  now?: () => number;
  onWritten?: RecomputeOptions['onWritten'];
  onRemoved?: RecomputeOptions['onRemoved'];
}): RecomputeOptions => ({
  retentionDays: options.retentionDays,
  owner: options.owner,
  now: options.now ?? Date.now,
  ...(options.onWritten ? { onWritten: options.onWritten } : {}),
  ...(options.onRemoved ? { onRemoved: options.onRemoved } : {}),
});

/** Recomputations in a row after the member's joins and leaves changed meanwhile (the job retries). */
const SPAN_ROUNDS = 20;

/**
 * After a write that may have missed a join or leave stored while it ran (its places in the
 * processing order decide: docs/tray-rules.md#leaving-and-rejoining-a-community), computes a
 * member's unexpired records of the community's targets again (recomputeRecord): their `post`
 * record and those their kept actions name, without what the member's mutes held back. A leave
 * itself computes nothing: it takes back nothing processed before it. A changed record is written by compare-and-set with the group's
 * kept actions and the member's away spans re-read each round; a record left with no action is
 * deleted once its next version is claimed, so no concurrent writer's change is lost unseen.
 * Returns the records it deleted, each told to onRemoved as it went; those written are told to
 * onWritten.
 */
export async function recomputeMemberRecords(
  db: Db,
  communityId: string,
  userId: string,
  options: RecomputeOptions,
): Promise<RemovedRecord[]> {
  const removed: RemovedRecord[] = [];
  // Compare-and-set guards the records, not the spans they were computed from: a join stored after
  // this round read the spans, whose own backfill found the records unchanged (nothing to add yet),
  // would otherwise leave the member away for good. So the spans are checked after the write, and a
  // change meanwhile computes the records again.
  for (let round = 1; round <= SPAN_ROUNDS; round++) {
    const { seen, deleted } = await recomputeOnce(db, communityId, userId, {
      ...options,
      namesNewer: round > 1,
    });
    for (const record of deleted) removed.push(record);
    if (deleted.length > 0) await options.onRemoved?.(deleted);
    if ((await memberChangesFingerprint(db, communityId, userId)) === seen) return removed;
  }
  throw new Error(
    `membership of ${userId} in ${communityId} still changing after ${SPAN_ROUNDS} recomputations`,
  );
}

/**
 * One recomputation; returns the records it deleted and the fingerprint of the member's changes its
 * first round read: every record it wrote was computed from those or later ones, so a change stored
 * since is one a write may have missed (a later round's read says nothing of what an earlier round
 * wrote).
 */
async function recomputeOnce(
  db: Db,
  communityId: string,
  userId: string,
  options: RecomputeOptions & { namesNewer: boolean },
): Promise<{ seen: string; deleted: RemovedRecord[] }> {
  const addressed = await readMemberActions(db, communityId, userId);
  const targets = new Map<string, { verb: Activity['verb']; targetId: string }>([
    [recordGroup('post', communityId), { verb: 'post', targetId: communityId }],
  ]);
  for (const action of addressed)
    targets.set(recordGroup(action.verb, action.targetId), { verb: action.verb, targetId: action.targetId });
  const keyGroups = new Map(
    [...targets].map(([group, { verb, targetId }]) => [recordKey(verb, targetId, userId), group]),
  );
  const actions = new Map<string, Activity[]>();
  let edges: MembershipEdge[] = [];
  let mutes: Mute[] = [];
  let seen: string | undefined;
  const gone = new Set<string>();
  await casUpdateRecords(
    db,
    [...keyGroups.keys()],
    (key, current) => {
      gone.delete(key);
      if (!current || current.expiresAt.getTime() <= options.now()) return 'unchanged';
      const kept = notHeldBack(actions.get(keyGroups.get(key) ?? '') ?? [], mutes);
      const next = recomputeRecord(current, kept, edges, {
        retentionDays: options.retentionDays,
        now: options.now(),
        namesNewer: options.namesNewer,
      });
      if (next === 'delete') {
        gone.add(key);
        return 'unchanged';
      }
      return next;
    },
    {
      owner: options.owner,
      now: options.now,
      ...(options.onWritten ? { onWritten: options.onWritten } : {}),
      refresh: async () => {
        const spans = await memberSpans(db, communityId, userId);
        edges = spans.edges;
        seen ??= spans.changes ?? '';
        mutes = await spansOfUser(db, userId);
        for (const group of new Set(keyGroups.values()))
          actions.set(group, await readTargetActions(db, group));
      },
    },
  );
  const deleted: RemovedRecord[] = [];
  for (const key of gone)
    deleted.push(...(await deleteEmptied(db, key, keyGroups.get(key) ?? '', communityId, userId, options)));
  return { seen: seen ?? '', deleted };
}

/**
 * Deletes a record left with no action, from the version it was computed from: its next version is
 * claimed first (claimVersions), so a concurrent writer either moved it before (then it is computed
 * again) or finds it gone. A claim lost to a writer that moves the record is progress: only rounds
 * in a row in which its version stays put count towards giving up (StalledRounds). Returns what it
 * deleted: this record, or what the recomputation it handed over to did (nothing if another writer
 * deleted it first, whose own caller tells of it).
 */
async function deleteEmptied(
  db: Db,
  key: string,
  group: string,
  communityId: string,
  userId: string,
  options: RecomputeOptions,
): Promise<RemovedRecord[]> {
  const rounds = new StalledRounds(`tray record ${key}`, options);
  let read: number | undefined;
  for (;;) {
    const current = (await readByIds(db, [key])).get(key);
    if (!current) return [];
    if (read !== undefined) rounds.count(current.version !== read);
    read = current.version;
    const next = recomputeRecord(
      current,
      notHeldBack(await readTargetActions(db, group), await spansOfUser(db, userId)),
      (await memberSpans(db, communityId, userId)).edges,
      { retentionDays: options.retentionDays, now: options.now() },
    );
    if (next !== 'delete') {
      // A concurrent writer added an action that counts: an ordinary recomputation then.
      return recomputeMemberRecords(db, communityId, userId, options);
    }
    const won = await claimVersions(db, [{ recordId: key, version: current.version + 1, state: 'deleted' }], {
      takeoverMs: 60_000,
      owner: options.owner,
    });
    if (won.has(key)) {
      const { deletedCount } = await db
        .collection<TrayRecordDoc>(TRAY_RECORDS)
        .deleteMany({ _id: key, version: current.version });
      if (deletedCount > 0) return [{ userId, key }];
    }
    await rounds.wait();
  }
}

import type { Db } from 'mongodb';
import { KeyedLock } from '../../../shared/async/keyed-lock.ts';
import type { TrayWritesPort, WriteContext } from '../port.ts';
import {
  applyPersonalActivities,
  fanOutCommunityPosts,
  type ApplyActivitiesOptions,
} from './apply-activities.ts';
import { backfillJoins } from './backfill-join.ts';
import { applyMembershipChanges } from './membership-store.ts';
import { recomputeMemberRecords } from './recompute-member-records.ts';
import { toldAsTrayRecords } from './to-tray-record.ts';
import { applyProfileChanges } from './user-profile-store.ts';

export interface MongoWritesOptions {
  /** Recipients per compare-and-set round of a fan-out (TRAY_FANOUT_BATCH). */
  fanOutBatch: number;
}

/**
 * The storage port's worker writes on MongoDB: the grouping core and its compare-and-set writes
 * (apply-activities.ts), joins and leaves as change documents with the late-join backfill, and
 * profile changes. One in-process lock per storage: this process's own concurrent writes to one
 * hot record queue up instead of colliding and retrying (compare-and-set keeps other processes right).
 */
export function createMongoWrites(db: Db, options: MongoWritesOptions): TrayWritesPort {
  const lock = new KeyedLock();
  const applyOptions = (context: WriteContext): ApplyActivitiesOptions => ({
    retentionDays: context.retentionDays,
    fanOutBatch: options.fanOutBatch,
    owner: context.owner,
    lock,
    now: () => context.now,
    ...toldAsTrayRecords(context.onWritten),
  });
  return {
    applyPersonal: (activities, context) => applyPersonalActivities(db, activities, applyOptions(context)),
    fanOutPosts: (communityId, posts, context) =>
      fanOutCommunityPosts(db, communityId, posts, applyOptions(context)),
    async applyMemberships(changes, context) {
      await applyMembershipChanges(db, changes, { retentionDays: context.retentionDays, now: context.now });
      // After the joins are stored: a post whose fan-out missed them is then found here (its event
      // was stored before its fan-out read the memberships), or its fan-out saw them. Events older
      // than their own retention are purged, so the records' retention bounds how far back it reads.
      await backfillJoins(db, changes, { ...applyOptions(context), eventsRetentionDays: Infinity });
      // A leave only takes time away: the member's records of the community computed again.
      const leaves = new Map(
        changes
          .filter((change) => !change.active)
          .map((change) => [JSON.stringify([change.communityId, change.userId]), change]),
      );
      for (const { communityId, userId } of leaves.values())
        await recomputeMemberRecords(db, communityId, userId, {
          retentionDays: context.retentionDays,
          owner: context.owner,
          now: () => context.now,
          ...toldAsTrayRecords(context.onWritten),
        });
    },
    applyProfiles: (changes, context) =>
      applyProfileChanges(db, changes, {
        owner: context.owner,
        // The tray's clock, as for every other write: the renamed records' changedAt is read by
        // live catch-up (changedSince), which must not see a process clock ahead or behind it.
        now: () => context.now,
        ...toldAsTrayRecords(context.onWritten),
      }),
  };
}

import type { Db } from 'mongodb';
import { KeyedLock } from '../../../../shared/async/keyed-lock.ts';
import { storableJson } from '../../../domain/storable-json.ts';
import type { TrayWritesPort, WriteContext } from '../../port.ts';
import { writeClock } from '../../write-clock.ts';
import { claimOwner } from '../compare-and-set/claim-owner.ts';
import { toldAsInboxRecords } from '../records/to-tray-record.ts';
import { applyRemovals } from '../removals/apply-removals.ts';
import { applyPersonalActivities } from './apply-personal-activities.ts';
import { applyProfileChanges } from '../grouping/apply-profile-changes.ts';
import { applyMemberships } from './apply-memberships.ts';
import { fanOutCommunityPosts } from './fan-out-posts.ts';
import type { GroupingOptions } from '../grouping/write-deliveries.ts';

export interface MongoWritesOptions {
  /** Recipients per compare-and-set round of a fan-out (TRAY_FANOUT_BATCH). */
  fanOutBatch: number;
  /** everyActionKeptSince, read at open (removals/kept-since.ts); 0 on a database that began with it. */
  keptSince?: number;
}

/**
 * The storage port's worker writes on MongoDB: the grouping core and its compare-and-set writes
 * (write-deliveries.ts: personal activities and the fan-out of posts), joins and leaves as change documents with the late-join backfill, and
 * profile changes, and removals (removals/apply-removals.ts). One in-process lock per storage: this process's own concurrent writes to one
 * hot record queue up instead of colliding and retrying (compare-and-set keeps other processes right).
 */
export function createMongoWrites(db: Db, options: MongoWritesOptions): TrayWritesPort {
  const lock = new KeyedLock();
  // Each call's claims belong to the job it runs for (claim-owner.ts), never named by the port.
  const applyOptions = (context: WriteContext, owner = claimOwner()): GroupingOptions => ({
    retentionDays: context.retentionDays,
    fanOutBatch: options.fanOutBatch,
    owner,
    lock,
    now: writeClock(context),
    keptSince: options.keptSince ?? 0,
    ...toldAsInboxRecords(context.onWritten),
    ...(context.onRemoved ? { onRemoved: context.onRemoved } : {}),
  });
  return {
    // U+0000 and lone surrogates become U+FFFD (storableJson), as on PostgreSQL: FerretDB refuses
    // them on its PostgreSQL, and the driver's UTF-8 would replace a lone surrogate unasked.
    applyPersonal: (activities, context) =>
      applyPersonalActivities(db, storableJson(activities), applyOptions(context)),
    fanOutPosts: (communityId, posts, context) =>
      fanOutCommunityPosts(db, communityId, storableJson(posts), applyOptions(context)),
    applyMemberships: (changes, context) => applyMemberships(db, changes, applyOptions(context)),
    async applyRemovals(removals, context) {
      await applyRemovals(db, removals, {
        retentionDays: context.retentionDays,
        owner: claimOwner(),
        now: writeClock(context),
        keptSince: options.keptSince ?? 0,
        ...(context.eventKey === undefined ? {} : { eventKey: context.eventKey }),
        ...toldAsInboxRecords(context.onWritten),
        ...(context.onRemoved ? { onRemoved: context.onRemoved } : {}),
      });
    },
    applyProfiles: (changes, context) =>
      applyProfileChanges(db, changes, {
        owner: claimOwner(),
        // The tray's clock, as for every other write: the renamed records' changedAt is read by
        // live catch-up (changedSince), which must not see a process clock ahead or behind it.
        now: writeClock(context),
        ...toldAsInboxRecords(context.onWritten),
      }),
  };
}

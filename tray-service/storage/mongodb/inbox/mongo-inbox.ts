import type { Db, Filter } from 'mongodb';
import { encodeRecordKey } from '../../../domain/record-key.ts';
import { seenByLastRead } from '../../../domain/seen-mark.ts';
import { PartialWriteError, type InboxPort } from '../../port.ts';
import type { InboxRecord } from '../../../domain/inbox-record.ts';
import { TRAY_RECORDS } from '../collections/collection-names.ts';
import type { ComputeRecord } from '../compare-and-set/cas-update-records.ts';
import { readByIds } from '../compare-and-set/read-by-ids.ts';
import { createMongoMutes } from '../mutes/mongo-mutes.ts';
import { leaveMadeUnread } from '../records/leave-made-unread.ts';
import { markInBatches } from '../records/mark-in-batches.ts';
import { markClock } from '../../mark-clock.ts';
import { writeMarked, type WriteMarkedOptions } from '../records/write-marked.ts';
import { recordBox, viewBox } from '../collections/record-box.ts';
import { createSortedPages } from '../records/sorted-pages.ts';
import { toInboxRecord } from '../records/to-tray-record.ts';
import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';
import { countInboxes, lastReadTimes } from './count-inboxes.ts';
import { inboxChange } from './inbox-change.ts';
import { withInboxChange } from '../records/with-inbox-change.ts';
import { wakeDue } from './wake-due.ts';

/**
 * The inbox of a user's tray on MongoDB (docs/storage.md#the-inbox). Views and counts are
 * equalities on the stored `box` (collections/record-box.ts), each served by a compound index of
 * tray_records; every mark reads the records it names (by `_id`) or the inbox's (by user and box),
 * computes each record's change by the domain's rules and writes them through the same
 * compare-and-set as the worker, so a mark never undoes a concurrent write or is undone by one.
 */
export function createMongoInbox(db: Db): InboxPort {
  const records = db.collection<TrayRecordDoc>(TRAY_RECORDS);
  const pages = createSortedPages(db);

  /**
   * The caller's unexpired records among `ids` (others' and unknown keys are left out). With `all`,
   * the inbox's are found by a cursor instead, marked a batch at a time (markInBatches).
   */
  const named = async (userId: string, ids: readonly string[], now: number) =>
    [...(await readByIds(db, [...new Set(ids)])).values()].filter(
      // A key names its own user: a record read under it is the caller's only if it says so.
      (record) =>
        record.userId === userId && ids.includes(encodeRecordKey(record)) && record.expiresAt.getTime() > now,
    );

  /** Writes `compute` over `found` (writeMarked); returns the records this call changed. */
  const write = (
    found: readonly TrayRecordDoc[],
    compute: ComputeRecord,
    options: Omit<WriteMarkedOptions<InboxRecord>, 'shape'>,
  ) => writeMarked(db, found, compute, { ...options, shape: toInboxRecord });

  // A record read again in a later round (a concurrent write) is judged again: gone or expired
  // records and another user's are left alone.
  const live = (current: TrayRecordDoc | undefined, userId: string, now: number) =>
    current && current.userId === userId && current.expiresAt.getTime() > now ? current : undefined;

  return {
    async page(userId, view, startAfter, pageSize, now) {
      const page = await pages.pageAfter(userId, startAfter, pageSize, now, viewBox(view));
      return { records: page.records.map(toInboxRecord), nextPage: page.nextPage };
    },

    // Made unread after the last-read time, as the unread count is: a record written after the
    // last-read with an unread time before it (a job whose clock began first) counts neither way.
    async countUnseen(userId, now) {
      const since = (await lastReadTimes(db, [userId])).get(userId) ?? 0;
      return records.countDocuments({
        userId,
        isSeen: false,
        box: 'inbox',
        unreadAt: { $gt: since },
        expiresAt: { $gt: new Date(now) },
      });
    },

    countInboxes: (userIds, now) => countInboxes(db, userIds, now),

    countView(userId, view, now) {
      const box = viewBox(view);
      return records.countDocuments({
        userId,
        ...(box === undefined ? {} : { box }),
        expiresAt: { $gt: new Date(now) },
      });
    },

    async mark(userId, mark, now, tell) {
      const clock = markClock(now);
      const compute: ComputeRecord = (_key, current) => {
        const record = live(current, userId, now);
        // `all` is the records in the inbox (docs/tray-api.md): one read again after a concurrent
        // archive or snooze is no longer among them, and marking it would undo that mark.
        if (!record || (mark.ids === 'all' && recordBox(record) !== 'inbox')) return 'unchanged';
        return withInboxChange(record, inboxChange(mark, record, now));
      };
      if (mark.ids !== 'all') return write(await named(userId, mark.ids, now), compute, { clock, tell });
      // With `only`, those the mark changes: those read, for archive's readOnly; those not seen
      // yet, for seen (a record seen already would be read only to change nothing, on every call).
      const only: Filter<TrayRecordDoc> =
        mark.kind === 'seen'
          ? { isSeen: false }
          : mark.kind === 'archive' && mark.readOnly === true
            ? { hasRead: true }
            : {};
      return markInBatches(
        records.find({ userId, box: 'inbox', expiresAt: { $gt: new Date(now) }, ...only }),
        (found) => write(found, leaveMadeUnread(found, compute), { clock, tell }),
      );
    },

    async seeThrough(userId, now) {
      const seen = (_key: string, current: TrayRecordDoc | undefined) => {
        const record = live(current, userId, now);
        return record ? withInboxChange(record, seenByLastRead(record, now)) : 'unchanged';
      };
      try {
        const changed = await markInBatches(
          records.find({
            userId,
            isSeen: false,
            hasRead: false,
            unreadAt: { $lte: now },
            expiresAt: { $gt: new Date(now) },
          }),
          // Like the last-read time itself: nothing for live streams (the port's seeThrough).
          (found) => write(found, seen, { clock: () => now, stampChangedAt: false }),
        );
        return changed.length;
      } catch (error) {
        // Nothing of it is announced, so a failure part-way is its cause: a busy or lost storage
        // is then answered as unavailable, for the client to retry.
        throw error instanceof PartialWriteError ? error.cause : error;
      }
    },

    wakeDue: (now, limit, tell) => wakeDue(db, now, limit, tell),

    ...createMongoMutes(db),
  };
}

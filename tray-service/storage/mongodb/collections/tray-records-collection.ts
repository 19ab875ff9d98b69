import { EXPIRY_INDEX, type CollectionSpec } from './collection-spec.ts';
import { TRAY_RECORDS } from './collection-names.ts';
import type { TrayRecord } from '../../../domain/tray-record.ts';
import type { InboxState } from '../../../domain/inbox-state.ts';
import type { RecordBox } from './record-box.ts';

/**
 * A tray record as the MongoDB adapter stores it: the reader's fields (domain/tray-record.ts) under
 * the key as `_id`, plus the adapter's own mechanics (the counting start, the fan-out's group key,
 * the expiry date of the TTL index, the compare-and-set version). to-tray-record.ts maps it back.
 */
export interface TrayRecordDoc extends Omit<TrayRecord, 'key' | 'changedAt'>, InboxState {
  /** v_tarid_uid (record-key.ts). */
  _id: string;
  /**
   * The earliest action this record has counted. Actors whose latest action is older are not its
   * actors: a record re-created after delete-all or expiry, or a member's record for a community
   * they joined later, starts counting afresh.
   */
  countFrom: number;
  /**
   * The time of the action `lastActionId` names, only when a removal left it older than lastUpdate
   * (absent: lastUpdate is that time): a later action is the newest when it is newer than this.
   */
  lastActionAt?: number;
  /**
   * The lastUpdate a removal left (absent: no removal changed the record): no later recomputation
   * (a join or leave a write missed) takes lastUpdate below it (docs/tray-rules.md#inbox).
   */
  updateFloor?: number;
  /** recordBox(archivedAt, snoozedUntil), kept with them by every write (record-box.ts). */
  box: RecordBox;
  /** recordGroup(verb, targetId): every recipient's record of one target, read by equality in a fan-out. */
  group: string;
  /** lastUpdate + TRAY_RETENTION_DAYS; TTL index where supported, purge + read filter everywhere. */
  expiresAt: Date;
  /**
   * Compare-and-set counter. Every write to an existing record, the worker's and the API's
   * (marking read), goes through casUpdateRecords: it claims `${_id}#${nextVersion}` in
   * tray_record_claims, then writes filtered on `version`, so concurrent writers never undo each
   * other, also on FerretDB whose updates are not atomic. A new record starts at its creation time
   * on the tray's clock, so a record re-created under the same `_id` never meets a claim of its
   * previous life.
   */
  version: number;
  /**
   * Epoch ms on the clock of the process that wrote it: when this state of the record was written.
   * casUpdateRecords stamps it on every insert and update, so a live stream that reconnects finds
   * "records changed since" by the user's records (docs/live-tray.md). Absent on records written
   * before live streams existed: they count as changed at 0.
   */
  changedAt?: number;
}

/** tray_records: one record per recipient and grouping key (the tray's notifications). */
export const trayRecordsCollection: CollectionSpec = {
  name: TRAY_RECORDS,
  indexes: [
    {
      name: 'user_history',
      key: { userId: 1, lastUpdate: -1, _id: -1 },
      serves:
        'the inbox’s "all" view: find({userId, lastUpdate < startAfter, expiresAt > now}).sort({lastUpdate: -1, _id: -1}).limit(n) (sorted-pages.ts)',
    },
    {
      name: 'box_history',
      key: { userId: 1, box: 1, lastUpdate: -1, _id: -1 },
      serves:
        'history v3/v2 pages and the inbox, archived and snoozed views: find({userId, box, lastUpdate < startAfter, expiresAt > now}).sort({lastUpdate: -1, _id: -1}).limit(n) (sorted-pages.ts)',
    },
    {
      name: 'box_unread',
      key: { userId: 1, hasRead: 1, box: 1, unreadAt: 1, expiresAt: 1 },
      serves:
        'unread count: countDocuments({userId, hasRead: false, box: "inbox", unreadAt > lastRead, expiresAt > now}) from the index alone; mark-all-as-read: find({userId, hasRead: false, expiresAt > now})',
    },
    {
      name: 'box_unseen_since',
      key: { userId: 1, isSeen: 1, box: 1, unreadAt: 1, expiresAt: 1 },
      serves:
        'unseen count: countDocuments({userId, isSeen: false, box: "inbox", unreadAt > lastRead, expiresAt > now}) from the index alone; last-read’s seen mark: find({userId, isSeen: false, hasRead: false, unreadAt <= now, expiresAt > now})',
    },
    {
      name: 'box_user',
      key: { userId: 1, box: 1, expiresAt: 1, verb: 1 },
      serves:
        'page counts: countDocuments({userId, box: "inbox", expiresAt > now, verb not in excluded}) from the index alone; marks of all: find({userId, box: "inbox", expiresAt > now}); delete-all and a deleted user: deleteMany({userId})',
    },
    {
      name: 'snooze_due',
      key: { box: 1, snoozedUntil: 1, _id: 1 },
      serves:
        'the wake-up: find({box: "snoozed", snoozedUntil <= now}).sort({snoozedUntil: 1, _id: 1}).limit(n) (inbox/wake-due.ts)',
    },
    {
      name: 'user_changes',
      key: { userId: 1, changedAt: 1, _id: 1 },
      serves:
        'live stream catch-up: find({userId, changedAt > since, expiresAt > now}).sort({changedAt: 1, _id: 1})',
    },
    {
      name: 'record_group',
      key: { group: 1 },
      serves: 'post fan-out: find({group}), every member’s record of one community (writes/fan-out-posts.ts)',
    },
    {
      name: 'actor_user',
      key: { 'actors.userId': 1 },
      serves: 'deleted user: find({actors.userId}) rewriting their snapshots to "Deleted user"',
    },
    EXPIRY_INDEX,
  ],
  retiredIndexes: ['history_bucket', 'expiry_day', 'actor_ids', 'user_unread', 'record_user', 'box_unseen'],
};

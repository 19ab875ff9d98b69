import { EXPIRY_INDEX, type CollectionSpec } from '../setup/collection-spec.ts';
import { TRAY_RECORDS } from '../collection-names.ts';

/** tray_records: one record per recipient and grouping key (the tray's notifications). */
export const trayRecordsCollection: CollectionSpec = {
  name: TRAY_RECORDS,
  indexes: [
    {
      name: 'user_history',
      key: { userId: 1, lastUpdate: -1, _id: -1 },
      serves:
        'history v3/v2 pages: find({userId, lastUpdate < startAfter, expiresAt > now}).sort({lastUpdate: -1, _id: -1}).limit(n) (sorted-pages.ts)',
    },
    {
      name: 'user_unread',
      key: { userId: 1, hasRead: 1, unreadAt: 1, expiresAt: 1 },
      serves:
        'unread count: countDocuments({userId, hasRead: false, unreadAt > lastRead, expiresAt > now}) from the index alone; mark-all-as-read: find({userId, hasRead: false})',
    },
    {
      name: 'record_user',
      key: { userId: 1, expiresAt: 1, verb: 1 },
      serves:
        'page counts: countDocuments({userId, expiresAt > now, verb not in excluded}) from the index alone; delete-all and a deleted user: deleteMany({userId})',
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
      serves: 'post fan-out: find({group}), every member’s record of one community (apply-activities.ts)',
    },
    {
      name: 'actor_user',
      key: { 'actors.userId': 1 },
      serves: 'deleted user: find({actors.userId}) rewriting their snapshots to "Deleted user"',
    },
    EXPIRY_INDEX,
  ],
  retiredIndexes: ['history_bucket', 'expiry_day', 'actor_ids'],
};

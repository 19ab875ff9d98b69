import type { CollectionSpec } from '../../shared/mongo/collection-spec.ts';
import { TRAY_RECORDS } from '../../shared/tray/tray-record.ts';

/** tray_records: one record per recipient and grouping key (the tray's notifications). */
export const trayRecordsCollection: CollectionSpec = {
  name: TRAY_RECORDS,
  indexes: [
    {
      name: 'api_user_history',
      key: { userId: 1, lastUpdate: -1, _id: -1 },
      serves:
        'history v3/v2 pages, page counts, unread count, mark-all-as-read, delete-all: userId, then (lastUpdate, _id) newest first',
    },
    {
      name: 'api_user_target_verb',
      key: { userId: 1, targetId: 1, verb: 1 },
      serves: 'POST v2/read: the caller’s record with this verb and target',
    },
    {
      name: 'actor_user',
      key: { 'actors.userId': 1 },
      serves: 'deleted user: find({actors.userId}) rewriting their snapshots to "Deleted user"',
    },
    {
      name: 'record_user',
      key: { userId: 1 },
      serves: 'deleted user: deleteMany({userId}) removing their own tray',
    },
    {
      name: 'expiry',
      key: { expiresAt: 1 },
      expireAfterSeconds: 0,
      serves: 'retention: the server’s TTL deletes, and deleteMany({expiresAt <= now}) in purgeExpired',
    },
  ],
  equalityFields: ['userId', 'targetId'],
};

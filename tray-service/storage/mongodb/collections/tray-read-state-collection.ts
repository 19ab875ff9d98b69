import type { CollectionSpec } from './collection-spec.ts';
import { TRAY_READ_STATE } from './collection-names.ts';

/**
 * The "Last Read" level (docs/contract.md#what-unread-compares): the user's latest last-read time,
 * kept by insert and prune (createMongoLatestTimes).
 */
export interface ReadStateDoc {
  userId: string;
  /** Epoch ms; records updated after it (and not marked read) count as unread. */
  lastReadAt: number;
}

/** tray_read_state: each user's last-read times (POST v2/last-read). */
export const trayReadStateCollection: CollectionSpec = {
  name: TRAY_READ_STATE,
  indexes: [
    {
      name: 'api_read_state_user',
      key: { userId: 1, lastReadAt: -1 },
      serves:
        'GET /notifications/v3 (the caller’s latest last-read time) and the prune after POST v2/last-read',
    },
  ],
};

import type { CollectionSpec } from './collection-spec.ts';
import { TRAY_CLEARS } from './collection-names.ts';

/** When a user last deleted their whole tray (v3/delete-all): what a reconnecting stream is told. */
export interface ClearDoc {
  userId: string;
  clearedAt: number;
}

/** tray_clears: each user's latest delete-all time (at most a few documents per user). */
export const trayClearsCollection: CollectionSpec = {
  name: TRAY_CLEARS,
  indexes: [
    {
      name: 'clears_user',
      key: { userId: 1, clearedAt: -1 },
      serves:
        'live stream reconnect: find({userId}) for the last delete-all; the prune after DELETE v3/delete-all',
    },
  ],
};

import type { CollectionSpec } from './collection-spec.ts';
import { USER_BAN_CHANGES } from './ban-store.ts';

/** user_ban_changes: each user's global ban changes, the newest kept (ban-store.ts). */
export const userBansCollection: CollectionSpec = {
  name: USER_BAN_CHANGES,
  indexes: [
    {
      name: 'ban_user',
      key: { userId: 1, rank: 1 },
      serves: 'deleteMany({userId, rank < newest}) pruning a user’s older changes',
    },
  ],
};

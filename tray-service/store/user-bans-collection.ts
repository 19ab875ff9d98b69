import type { CollectionSpec } from '../../shared/mongo/collection-spec.ts';
import { USER_BANS } from './ban-store.ts';

/** user_bans: each user's global ban changes, the newest kept (ban-store.ts). */
export const userBansCollection: CollectionSpec = {
  name: USER_BANS,
  indexes: [
    {
      name: 'ban_user',
      key: { userId: 1, rank: 1 },
      serves: 'find({userId}) in storedBanOf and deleteMany({userId, rank < newest}) pruning older changes',
    },
  ],
  equalityFields: ['userId'],
};

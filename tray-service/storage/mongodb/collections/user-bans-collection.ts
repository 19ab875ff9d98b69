import type { CollectionSpec } from './collection-spec.ts';
import { USER_BAN_CHANGES } from './collection-names.ts';

/**
 * user_ban_changes: the global bans and unbans of each user, the newest of which (highest `rank`)
 * is the user's state. Older entries are pruned as newer ones arrive.
 */
export interface UserBanChangeDoc {
  /** JSON [userId, rank]: one document per distinct change, so a redelivery inserts nothing. */
  _id: string;
  userId: string;
  banned: boolean;
  /** Epoch ms of the change on the platform (the event's createdAt). */
  changedAt: number;
  /** banRank(banned, changedAt): orders a user's changes. */
  rank: number;
}

/** user_ban_changes: each user's global ban changes, the newest kept (mongo-bans.ts). */
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

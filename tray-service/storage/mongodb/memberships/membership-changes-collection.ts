import type { CollectionSpec } from '../setup/collection-spec.ts';
import { MEMBERSHIP_CHANGES } from './membership-changes.ts';

/** community_member_changes: every join and leave, folded into membership intervals (membership-store.ts). */
export const membershipChangesCollection: CollectionSpec = {
  name: MEMBERSHIP_CHANGES,
  indexes: [
    {
      name: 'change_community',
      key: { communityId: 1 },
      serves: 'post fan-out and late-join backfill: find({communityId}) in communityIntervals',
    },
    {
      name: 'change_member',
      key: { member: 1, at: 1 },
      serves: 'find({member}) and deleteMany({member, at < newest old}) pruning a member’s old changes',
    },
    {
      name: 'change_user',
      key: { userId: 1 },
      serves: 'deleted user: find({userId}) in endMemberships',
    },
  ],
};

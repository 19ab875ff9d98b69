import type { CollectionSpec } from '../setup/collection-spec.ts';
import { MEMBERSHIPS } from '../collection-names.ts';

/**
 * community_members: memberships loaded by `npm run import-members` (and those stored before
 * joins and leaves became change documents); read with community_member_changes.
 */
export const membershipsCollection: CollectionSpec = {
  name: MEMBERSHIPS,
  indexes: [
    {
      name: 'fanout',
      key: { communityId: 1 },
      serves: 'post fan-out: find({communityId}) in communityIntervals (decided in memory)',
    },
    {
      name: 'member_user',
      key: { userId: 1 },
      serves: 'deleted user: find({userId}) in endMemberships',
    },
  ],
};

import type { CollectionSpec } from '../../shared/mongo/collection-spec.ts';
import { MEMBERSHIPS } from '../../shared/tray/tray-record.ts';

/** community_members: who belongs to which community since when (post fan-out). */
export const membershipsCollection: CollectionSpec = {
  name: MEMBERSHIPS,
  indexes: [
    {
      name: 'fanout',
      key: { communityId: 1 },
      serves: 'post fan-out: find({communityId}) in postRecipients (active and since decided in memory)',
    },
    {
      name: 'member_user',
      key: { userId: 1 },
      serves: 'deleted user: updateMany({userId}) in endMemberships',
    },
  ],
  equalityFields: ['communityId', 'userId'],
};

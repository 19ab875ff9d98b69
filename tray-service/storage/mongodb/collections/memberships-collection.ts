import type { CollectionSpec } from './collection-spec.ts';
import { MEMBERSHIPS } from './collection-names.ts';

/**
 * community_members: one imported membership per (community, user) (`npm run import-members`); the
 * worker stores joins and leaves as change documents (community_member_changes) and reads both.
 */
export interface MembershipDoc {
  /** membershipId(communityId, userId) */
  _id: string;
  communityId: string;
  userId: string;
  active: boolean;
  /** Epoch ms of the latest join; posts created before it are not fanned out to this member. */
  since: number;
  /** Epoch ms of the latest join/leave applied; older join/leave deliveries are ignored. */
  updatedAt: number;
}

export function membershipId(communityId: string, userId: string): string {
  // JSON keeps the two ids apart whatever characters they contain.
  return JSON.stringify([communityId, userId]);
}

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

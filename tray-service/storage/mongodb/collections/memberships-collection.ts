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
  /** Whether `updatedAt` is a join (always, as the import writes it) or a leave. */
  active: boolean;
  /** Epoch ms of the join the first list gave (its joinedAt, else its time). */
  since: number;
  /**
   * Epoch ms of the first list's time; on a document from before lists kept their times, of the
   * one list's time or the latest join or leave applied then.
   */
  updatedAt: number;
  /**
   * Epoch ms of every list that named the member (npm run import-members), each time once: a join
   * at each, processed before everything. One element per distinct list time; absent on a
   * document from before lists kept their times.
   */
  asOf?: number[];
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

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

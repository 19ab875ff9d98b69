import type { CollectionSpec } from './collection-spec.ts';
import { MEMBERSHIP_CHANGES } from './collection-names.ts';

/** community_member_changes: every join and leave, folded into membership intervals (membership-changes.ts). */
export const membershipChangesCollection: CollectionSpec = {
  name: MEMBERSHIP_CHANGES,
  indexes: [
    {
      name: 'change_community',
      key: { communityId: 1 },
      serves: 'post fan-out and late-join backfill: find({communityId}) in communityMembers',
    },
    {
      name: 'change_member',
      key: { member: 1, at: 1 },
      serves: 'find({member}) reading a member’s changes (the prune then deletes by _id)',
    },
    {
      name: 'change_user',
      key: { userId: 1 },
      serves: 'deleted user: find({userId}) in endMemberships',
    },
    {
      name: 'change_processed_at',
      key: { processedAt: 1 },
      serves:
        'purge: updateMany({processedAt: {$exists: false}}), the changes an older worker stored in a rolling upgrade (giveChangesProcessedAt)',
    },
  ],
};

/**
 * community_member_changes: every join and leave, one document per (community, user, time, kind).
 * The membership intervals are folded from them in memory (membershipIntervals).
 */
export interface MembershipChangeDoc {
  /** JSON [communityId, userId, at, joined]: a redelivery inserts nothing. */
  _id: string;
  communityId: string;
  userId: string;
  /** JSON [communityId, userId]: the prune deletes one member's older changes by equality. */
  member: string;
  joined: boolean;
  /** Epoch ms of the change: the event's createdAt, or the time the receiver accepted it. */
  at: number;
  /**
   * Its place in the order joins, leaves and kept actions were processed in (processing-order.ts):
   * an action counts unless a leave covering it was processed before it. Absent on changes stored
   * before the order was kept: those count as 0, before every kept action.
   */
  processed?: number;
  /**
   * Leaves only: a place taken after it was stored (leaves-stored-by.ts); a write with a place
   * between `processed` and this may have read the memberships without it. Absent until noted.
   */
  storedBy?: number;
  /**
   * When the tray processed it (epoch ms): the prune keeps a change processed late (prunableChanges).
   * Changes stored before it was kept got the upgrade's time (migrate-processed-at.ts).
   */
  processedAt?: number;
}

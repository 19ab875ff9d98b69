/** events: every verified delivery, for moderation and analytics (the admin API reads it). */
export interface StoredEventDoc {
  /** The receiver's dedupe key (lowercase hex SHA-256 of the raw body). */
  _id: string;
  event: string;
  data: Record<string, unknown>;
  webhook: string;
  receivedAt: Date;
  storedAt: Date;
  /** receivedAt + EVENTS_RETENTION_DAYS. */
  expiresAt: Date;
  /** `unknown`: a name the mapping does not know; `invalid`: known name, payload failed validation. */
  status: 'applied' | 'stored' | 'unknown' | 'invalid';
  error?: string;
  /**
   * On a community post: communityDay(community, UTC day of the post's createdAt), at top level so a
   * join processed late finds the posts it must add by equality, one day at a time
   * (backfill-join.ts), and `activityAt`, the post's createdAt (epoch ms). A bucket key the
   * MongoDB adapter keeps: every stored post event carries it, so a range on (community,
   * createdAt) instead would leave a late join blind to the posts stored before such a change
   * until a migration rewrote them; by day, a join reads one or two indexed equalities.
   */
  communityDay?: string;
  activityAt?: number;
}

/** The key of a community's posts of one UTC day in `events`: JSON keeps the two parts apart. */
export function communityDay(communityId: string, day: string): string {
  return JSON.stringify([communityId, day]);
}

import { EXPIRY_INDEX, type CollectionSpec } from './collection-spec.ts';
import { EVENTS } from './collection-names.ts';
import type { Activity } from '../../../domain/activity.ts';
import type { ModerationAction } from '../../../domain/moderation-action.ts';
import type { StoredEventStatus } from '../../../domain/stored-event.ts';

/** events: every verified delivery, for moderation and analytics (the admin API reads it). */
export interface StoredEventDoc {
  /** The receiver's dedupe key (lowercase hex SHA-256 of the raw body). */
  _id: string;
  event: string;
  data: Record<string, unknown>;
  webhook: string;
  receivedAt: Date;
  storedAt: Date;
  /**
   * receivedAt + the EVENTS_RETENTION_DAYS in force when stored, or as long from its storing when
   * that had passed (domain/event-expiry.ts); a later change of the setting leaves it.
   */
  expiresAt: Date;
  /** The stored event's status (domain/stored-event.ts). */
  status: StoredEventStatus;
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
  /**
   * `data` is escaped (escaped-keys.ts): it had a key no field name may be, or an array inside
   * an array. Absent: `data` is stored as received. Read it through payloadOf.
   */
  keysEscaped?: true;
}

/** The key of a community's posts of one UTC day in `events`: JSON keeps the two parts apart. */
export function communityDay(communityId: string, day: string): string {
  return JSON.stringify([communityId, day]);
}

/** events: every received event, once (dedupe key as `_id`), for the admin API and exports. */
export const eventsCollection: CollectionSpec = {
  name: EVENTS,
  indexes: [
    {
      name: 'admin_received_desc',
      key: { receivedAt: -1, _id: -1 },
      serves: 'admin list/export without filters, and since/until ranges: newest first',
    },
    {
      name: 'admin_event_received_desc',
      key: { event: 1, receivedAt: -1, _id: -1 },
      serves: 'admin list/export filtered by event name',
    },
    {
      name: 'admin_webhook_received_desc',
      key: { webhook: 1, receivedAt: -1, _id: -1 },
      serves: 'admin list/export filtered by webhook',
    },
    {
      name: 'admin_status_received_desc',
      key: { status: 1, receivedAt: -1, _id: -1 },
      serves: 'admin list/export filtered by status (?status=invalid among millions applied)',
    },
    {
      name: 'admin_user_received_desc',
      key: { userId: 1, receivedAt: -1, _id: -1 },
      serves: 'admin list/export filtered by the acting user (?userId=)',
    },
    {
      name: 'admin_community_received_desc',
      key: { communityId: 1, receivedAt: -1, _id: -1 },
      serves: 'admin list/export filtered by community (?communityId=)',
    },
    {
      name: 'admin_moderation_received_desc',
      key: { moderation: 1, receivedAt: -1, _id: -1 },
      serves: 'admin list/export filtered by moderation outcome (?moderation=, $in merges the sorted runs)',
    },
    EXPIRY_INDEX,
    {
      name: 'community_posts',
      key: { communityDay: 1 },
      serves:
        'late-join backfill: find({communityDay}), a community’s stored posts of one day (backfill-join.ts)',
    },
  ],
  retiredIndexes: ['expiry_day'],
};

/** An event document as this adapter stores it: a community post also keeps its activity. */
export interface EventDoc extends StoredEventDoc {
  /** The post's activity as mapped when stored: what a late join applies (backfill-join.ts). */
  postActivity?: Activity;
  /** The acting user and the community (the admin filters). */
  userId?: string;
  communityId?: string;
  /**
   * The most severe action of the event's moderation decisions, `none` until one is saved
   * (absent on events stored by releases before the events console: read as `none`).
   */
  moderation?: ModerationAction | 'none';
  /** When the worker finished applying the event (the lag chart). */
  appliedAt?: Date;
  /**
   * Set while the event's count into the events-per-minute chart is not known to be made: the
   * job's retry, storing it again, makes it (once: event-rollups.ts). Absent once counted. Its
   * value is the mark of the call making the count (a random id; `true` from releases before): a
   * call finishing another's count takes the mark over first (mongo-events.ts finishedCount).
   */
  countPending?: true | string;
  /** The same for its applied mark's lag (`appliedAt`) in the lag chart. */
  lagPending?: true | string;
  /**
   * The maker (EventsPort.markApplied's `by`) of the call that made the applied mark first, once
   * its lag is counted: a later call of the same maker is told it made it.
   */
  appliedBy?: string;
  /**
   * The BSON size of `data` as stored: a page read for an export or a replay stops at a number of
   * bytes (event-reads.ts). Absent on events stored by releases before it: they count as none.
   */
  bytes?: number;
}

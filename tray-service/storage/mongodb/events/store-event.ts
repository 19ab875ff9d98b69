import type { Db } from 'mongodb';
import type { WebhookJobData } from '../../../../shared/queue/webhook-queue.ts';
import { EVENTS } from '../collection-names.ts';
import { communityDay, type StoredEventDoc } from './stored-event-doc.ts';
import { insertCoalesced } from '../compare-and-set/coalesced-writes.ts';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { dayOf } from '../records/storage-keys.ts';
import type { Activity } from '../../../domain/activity.ts';
import type { ModerationAction } from '../../../domain/moderation-action.ts';

export interface EventOutcome {
  status: StoredEventDoc['status'];
  error?: string;
  /**
   * A community post: its community and createdAt, kept at top level for the late-join backfill,
   * and the post's activity (what the backfill applies; events stored without it are mapped again).
   */
  communityPost?: { communityId: string; at: number; activity?: Activity };
  /** The mapping's subject, for the admin filters. */
  userId?: string;
  communityId?: string;
}

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
}

/** A delivery as the storage port hands it over (the receiver's dedupe key as `key`). */
export interface IncomingEvent {
  key: string;
  event: string;
  data: Record<string, unknown>;
  webhook: string;
  receivedAt: Date;
}

/**
 * Stores a delivery once, with what the mapping made of it: `_id` is the receiver's dedupe key and
 * it is inserted once, so a redelivered or retried job keeps one unchanged document. One command. Returns the document as stored by this call (for the moderation hook).
 */
export async function storeEvent(
  db: Db,
  job: WebhookJobData,
  outcome: EventOutcome,
  retentionDays: number,
  now = new Date(),
): Promise<StoredEventDoc> {
  const doc = eventDocument(
    {
      key: job.dedupeKey,
      event: job.event,
      data: job.data,
      webhook: job.webhook,
      receivedAt: new Date(job.receivedAt),
    },
    outcome,
    retentionDays,
    now,
  );
  // An insert, not an upsert: FerretDB runs an upsert as a read and then a write, and a
  // redelivery's duplicate key already says the event is stored. Shared with the concurrent jobs'
  // inserts: one command for many events.
  await insertCoalesced<EventDoc>(db, EVENTS, [doc]);
  return doc;
}

/** The stored document of a delivery and its outcome. Pure. */
export function eventDocument(
  event: IncomingEvent,
  outcome: EventOutcome,
  retentionDays: number,
  now: Date,
): EventDoc {
  const expiresAt = new Date(event.receivedAt.getTime() + retentionDays * DAY_MS);
  const post = outcome.communityPost;
  return {
    _id: event.key,
    event: event.event,
    data: event.data,
    webhook: event.webhook,
    receivedAt: event.receivedAt,
    storedAt: now,
    expiresAt,
    status: outcome.status,
    ...(outcome.error === undefined ? {} : { error: outcome.error }),
    ...(outcome.userId === undefined ? {} : { userId: outcome.userId }),
    ...(outcome.communityId === undefined ? {} : { communityId: outcome.communityId }),
    moderation: 'none',
    ...(post
      ? {
          communityDay: communityDay(post.communityId, dayOf(post.at)),
          activityAt: post.at,
          ...(post.activity ? { postActivity: post.activity } : {}),
        }
      : {}),
  };
}

import type { Db } from 'mongodb';
import type { WebhookJobData } from '../../../../shared/queue/webhook-queue.ts';
import { EVENTS } from '../collection-names.ts';
import { communityDay, type StoredEventDoc } from './events-collection.ts';
import { insertCoalesced } from '../compare-and-set/coalesced-writes.ts';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { dayOf } from '../records/storage-keys.ts';
import type { Activity } from '../../../domain/activity.ts';
import type { EventDoc } from './events-collection.ts';

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

import type { Db } from 'mongodb';
import type { WebhookJobData } from '../../../shared/queue/webhook-queue.ts';
import { communityDay, EVENTS, type StoredEventDoc } from '../../../shared/tray/tray-record.ts';
import { insertCoalesced } from './coalesced-writes.ts';
import { DAY_MS } from '../../../shared/time/durations.ts';
import { dayOf } from '../../../shared/tray/storage-keys.ts';

export interface EventOutcome {
  status: StoredEventDoc['status'];
  error?: string;
  /** A community post: its community and createdAt, kept at top level for the late-join backfill. */
  communityPost?: { communityId: string; at: number };
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
  const receivedAt = new Date(job.receivedAt);
  const expiresAt = new Date(receivedAt.getTime() + retentionDays * DAY_MS);
  const doc: StoredEventDoc = {
    _id: job.dedupeKey,
    event: job.event,
    data: job.data,
    webhook: job.webhook,
    receivedAt,
    storedAt: now,
    expiresAt,
    expiresDay: dayOf(expiresAt),
    status: outcome.status,
    ...(outcome.error === undefined ? {} : { error: outcome.error }),
    ...(outcome.communityPost
      ? {
          communityDay: communityDay(outcome.communityPost.communityId, dayOf(outcome.communityPost.at)),
          activityAt: outcome.communityPost.at,
        }
      : {}),
  };
  // An insert, not an upsert: FerretDB runs an upsert as a read and then a write, and a
  // redelivery's duplicate key already says the event is stored. Shared with the concurrent jobs'
  // inserts: one command for many events.
  await insertCoalesced<StoredEventDoc>(db, EVENTS, [doc]);
  return doc;
}

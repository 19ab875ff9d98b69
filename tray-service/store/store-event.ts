import type { Db } from 'mongodb';
import type { WebhookJobData } from '../../shared/queue/webhook-queue.ts';
import { EVENTS, type StoredEventDoc } from '../../shared/tray/tray-record.ts';

const DAY_MS = 24 * 3600 * 1000;

/** Stores a delivery once: `_id` is the dedupe key, so a redelivered job keeps one document. */
export async function storeEvent(db: Db, job: WebhookJobData, retentionDays = 30): Promise<void> {
  const receivedAt = new Date(job.receivedAt);
  await db.collection<StoredEventDoc>(EVENTS).updateOne(
    { _id: job.dedupeKey },
    {
      $setOnInsert: {
        event: job.event,
        data: job.data,
        webhook: job.webhook,
        receivedAt,
        storedAt: new Date(),
        expiresAt: new Date(receivedAt.getTime() + retentionDays * DAY_MS),
        status: 'stored',
      },
    },
    { upsert: true },
  );
}

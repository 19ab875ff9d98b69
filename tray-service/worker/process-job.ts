import type { Db } from 'mongodb';
import type { WebhookJobData } from '../../shared/queue/webhook-queue.ts';
import type { StoredEventDoc } from '../../shared/tray/tray-record.ts';
import { applyActivities } from '../store/apply-activities.ts';
import { applyMembershipChanges } from '../store/membership-store.ts';
import { storeEvent } from '../store/store-event.ts';
import { applyProfileChanges } from '../store/user-profile-store.ts';
import type { KeyedLock } from './keyed-lock.ts';
import { mapEvent } from './map-event.ts';

export interface ProcessOptions {
  eventsRetentionDays: number;
  trayRetentionDays: number;
  fanOutBatch: number;
  lock?: KeyedLock;
  /**
   * Runs after the event is stored and applied (DESIGN.md data flow, step d: moderation rules).
   * Must be idempotent: a job that throws is retried and the hook sees the event again.
   */
  onStored?: (event: StoredEventDoc) => Promise<void>;
}

/**
 * One queue job: (a) store the raw event, (b) map it, (c) apply it, (d) hand it to the hook.
 * Permanent problems (unknown name, invalid payload) are stored as a status and the job completes;
 * anything thrown (MongoDB unavailable, ...) is transient and bull retries it with backoff.
 * Every step is idempotent, so a retry after a partial run leaves the same state.
 */
export async function processJob(
  db: Db,
  job: WebhookJobData,
  options: ProcessOptions,
): Promise<StoredEventDoc> {
  const mapped = mapEvent({ event: job.event, data: job.data, receivedAt: Date.parse(job.receivedAt) });
  const stored = await storeEvent(
    db,
    job,
    { status: mapped.status, ...(mapped.error === undefined ? {} : { error: mapped.error }) },
    options.eventsRetentionDays,
  );
  await applyMembershipChanges(db, mapped.memberships);
  await applyProfileChanges(db, mapped.profiles, job.dedupeKey);
  await applyActivities(db, mapped.activities, {
    retentionDays: options.trayRetentionDays,
    fanOutBatch: options.fanOutBatch,
    owner: job.dedupeKey,
    ...(options.lock ? { lock: options.lock } : {}),
  });
  if (options.onStored) await options.onStored(stored);
  return stored;
}

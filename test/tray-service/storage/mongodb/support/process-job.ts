/**
 * The MongoDB adapter's job path as one function (store, map, apply, hook), the way the worker ran
 * it before the storage port: the adapter's own tests drive its collections through it. The service
 * runs use-cases/apply-job.ts over the port instead.
 */
import type { RedisClient } from '../../../../../shared/redis/create-redis.ts';
import type { Db } from 'mongodb';
import type { WebhookJobData } from '../../../../../shared/queue/webhook-queue.ts';
import type { StoredEventDoc } from '../../../../../tray-service/storage/mongodb/stored-event-doc.ts';
import type { TrayRecordDoc } from '../../../../../tray-service/storage/mongodb/tray-record-doc.ts';
import { publishBans } from '../../../../../tray-service/bans/publish-bans.ts';
import {
  applyActivities,
  type BatchPosts,
  type RunFanOut,
} from '../../../../../tray-service/storage/mongodb/apply-activities.ts';
import { applyBanChanges } from '../../../../../tray-service/storage/mongodb/ban-store.ts';
import { backfillJoins } from '../../../../../tray-service/storage/mongodb/backfill-join.ts';
import { applyMembershipChanges } from '../../../../../tray-service/storage/mongodb/membership-store.ts';
import { storeEvent } from '../../../../../tray-service/storage/mongodb/store-event.ts';
import { applyProfileChanges } from '../../../../../tray-service/storage/mongodb/user-profile-store.ts';
import type { KeyedLock } from '../../../../../shared/async/keyed-lock.ts';
import { mapEvent } from '../../../../../tray-service/domain/map-event.ts';

export interface ProcessOptions {
  eventsRetentionDays: number;
  trayRetentionDays: number;
  fanOutBatch: number;
  /** Runs each community-post fan-out (startWorker bounds how many run at once); direct without it. */
  fanOuts?: RunFanOut;
  /** Gathers one community's waiting posts into one fan-out (startWorker); each alone without it. */
  batchPosts?: BatchPosts;
  lock?: KeyedLock;
  /**
   * Where ban changes are published for the API (BAN_REDIS_PREFIX) once stored; startWorker always
   * sets it. Without it a ban event fails its job rather than be stored but never enforced.
   */
  bans?: { redis: RedisClient; prefix: string };
  /**
   * Runs after the event is stored and applied (the moderation rules, docs/operations.md).
   * Must be idempotent: a job that throws is retried and the hook sees the event again.
   */
  onStored?: (event: StoredEventDoc) => Promise<void>;
  /** Told of every tray record written, after the write (live streams, docs/live-tray.md). */
  onRecordsWritten?: (records: readonly TrayRecordDoc[]) => Promise<void>;
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
  const communityPost = mapped.activities.find((activity) => activity.audience.kind === 'community');
  const stored = await storeEvent(
    db,
    job,
    {
      status: mapped.status,
      ...(mapped.error === undefined ? {} : { error: mapped.error }),
      ...(communityPost?.audience.kind === 'community'
        ? { communityPost: { communityId: communityPost.audience.communityId, at: communityPost.at } }
        : {}),
    },
    options.eventsRetentionDays,
  );
  if (mapped.bans) {
    if (!options.bans) throw new Error('processJob: a ban event needs options.bans to publish it');
    // Durable first: a crash between the two leaves the job to be retried, and both steps
    // keep only the newest change, so the retry publishes what the store holds.
    await applyBanChanges(db, mapped.bans);
    await publishBans(options.bans.redis, options.bans.prefix, mapped.bans);
  }
  const applyOptions = {
    retentionDays: options.trayRetentionDays,
    fanOutBatch: options.fanOutBatch,
    owner: job.dedupeKey,
    ...(options.lock ? { lock: options.lock } : {}),
    ...(options.fanOuts ? { fanOuts: options.fanOuts } : {}),
    ...(options.batchPosts ? { batchPosts: options.batchPosts } : {}),
    ...(options.onRecordsWritten ? { onWritten: options.onRecordsWritten } : {}),
  };
  await applyMembershipChanges(db, mapped.memberships, { retentionDays: options.trayRetentionDays });
  // After the joins are stored: a post whose fan-out missed them is then found here (its event
  // was stored before its fan-out read the memberships), or its fan-out saw them.
  await backfillJoins(db, mapped.memberships, {
    ...applyOptions,
    eventsRetentionDays: options.eventsRetentionDays,
  });
  await applyProfileChanges(db, mapped.profiles, {
    owner: job.dedupeKey,
    ...(options.onRecordsWritten ? { onWritten: options.onRecordsWritten } : {}),
  });
  await applyActivities(db, mapped.activities, applyOptions);
  if (options.onStored) await options.onStored(stored);
  return stored;
}

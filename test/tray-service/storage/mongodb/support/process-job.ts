/**
 * A queue job on the MongoDB adapter as one function (store, map, apply), for the adapter's own
 * tests that count or inspect the commands a job sends: the raw event is stored without the events
 * console's rollups and applied marks, and its changes go through the adapter's writes port in the
 * job's scope, in the order of use-cases/apply-job.ts, which the service runs over the whole port.
 */
import type { Db } from 'mongodb';
import { jobScope } from '../../../../../shared/async/job-scope.ts';
import type { WebhookJobData } from '../../../../../shared/queue/webhook-queue.ts';
import type { RedisClient } from '../../../../../shared/redis/create-redis.ts';
import { publishBans } from '../../../../../tray-service/bans/publish-bans.ts';
import { mapEvent } from '../../../../../tray-service/domain/map-event.ts';
import type { StoredEventDoc } from '../../../../../tray-service/storage/mongodb/collections/events-collection.ts';
import { eventDocument } from '../../../../../tray-service/storage/mongodb/events/event-document.ts';
import { EVENTS } from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { insertCoalesced } from '../../../../../tray-service/storage/mongodb/driver/coalesced-writes.ts';
import { createMongoWrites } from '../../../../../tray-service/storage/mongodb/writes/mongo-writes.ts';
import { createMongoBans } from '../../../../../tray-service/storage/mongodb/moderation/mongo-bans.ts';
import type { WriteContext } from '../../../../../tray-service/storage/port.ts';
import type { ScheduleFanOut } from '../../../../../tray-service/use-cases/apply-job.ts';

export interface ProcessOptions {
  eventsRetentionDays: number;
  trayRetentionDays: number;
  fanOutBatch: number;
  /** Gathers one community's waiting posts into one fan-out (as the worker does); each alone without it. */
  scheduleFanOut?: ScheduleFanOut;
  /**
   * Where ban changes are published for the API (BAN_REDIS_PREFIX) once stored; the worker always
   * sets it. Without it a ban event fails its job rather than be stored but never enforced.
   */
  bans?: { redis: RedisClient; prefix: string };
}

/** One queue job; every step is idempotent, so a retry after a partial run leaves the same state. */
export async function processJob(
  db: Db,
  job: WebhookJobData,
  options: ProcessOptions,
): Promise<StoredEventDoc> {
  const mapped = mapEvent({ event: job.event, data: job.data, receivedAt: Date.parse(job.receivedAt) });
  const communityPost = mapped.activities.find((activity) => activity.audience.kind === 'community');
  // The event alone, one insert (the port's store also counts it into the console's rollups).
  const stored = eventDocument(
    {
      key: job.dedupeKey,
      event: job.event,
      data: job.data,
      webhook: job.webhook,
      receivedAt: new Date(job.receivedAt),
    },
    {
      status: mapped.status,
      ...(mapped.error === undefined ? {} : { error: mapped.error }),
      ...(communityPost?.audience.kind === 'community'
        ? {
            communityPost: {
              communityId: communityPost.audience.communityId,
              at: communityPost.at,
              activity: communityPost,
            },
          }
        : {}),
    },
    options.eventsRetentionDays,
    new Date(),
  );
  await insertCoalesced(db, EVENTS, [stored]);
  if (mapped.bans) {
    if (!options.bans) throw new Error('processJob: a ban event needs options.bans to publish it');
    await createMongoBans(db).apply(mapped.bans);
    await publishBans(options.bans.redis, options.bans.prefix, mapped.bans);
  }
  const writes = createMongoWrites(db, { fanOutBatch: options.fanOutBatch });
  const context = (): WriteContext => ({ now: Date.now(), retentionDays: options.trayRetentionDays });
  const schedule: ScheduleFanOut = options.scheduleFanOut ?? ((_key, post, fanOut) => fanOut([post]));
  await jobScope.run(job.dedupeKey, async () => {
    if (mapped.memberships.length > 0) await writes.applyMemberships(mapped.memberships, context());
    if (mapped.profiles.length > 0) await writes.applyProfiles(mapped.profiles, context());
    const personal = mapped.activities.filter((activity) => activity.audience.kind === 'user');
    if (personal.length > 0) await writes.applyPersonal(personal, context());
    for (const post of mapped.activities) {
      const { audience } = post;
      if (audience.kind !== 'community') continue;
      await schedule(JSON.stringify([post.verb, post.targetId, audience.communityId]), post, (posts) =>
        writes.fanOutPosts(audience.communityId, posts, context()),
      );
    }
    if (mapped.removals && mapped.removals.length > 0)
      await writes.applyRemovals(mapped.removals, { ...context(), eventKey: job.dedupeKey });
  });
  return stored;
}

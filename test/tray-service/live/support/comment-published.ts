import { createLogger } from '../../../../shared/logging/create-logger.ts';
import type { RedisClient } from '../../../../shared/redis/create-redis.ts';
import { createChangePublisher } from '../../../../tray-service/live/change-publisher.ts';
import type { TrayStorage } from '../../../../tray-service/storage/port.ts';
import { applyJob, type AppliedJob } from '../../../../tray-service/use-cases/apply-job.ts';
import { commentEvent, minute } from '../../worker/event-builder.ts';
import { jobDataOf } from '../../worker/worker-harness.ts';

const silent = createLogger({ name: 'test', level: 'silent' });

/**
 * u-cid's comment on `user`'s post `postId` at minute `at`, applied as the worker applies a job,
 * its records published to the live streams (prefix `live`) on `redis`.
 */
export function commentPublished(
  storage: TrayStorage,
  redis: RedisClient,
  user: string,
  postId: string,
  at = 1,
): Promise<AppliedJob> {
  return applyJob(
    jobDataOf(
      commentEvent({
        postId,
        postOwner: user,
        author: 'u-cid',
        commentId: `cm-${postId}`,
        createdAt: minute(at),
      }),
    ),
    {
      storage,
      eventsRetentionDays: 30,
      trayRetentionDays: 90,
      networkId: 'default',
      onWritten: createChangePublisher(redis, 'live', silent).recordsWritten,
    },
  );
}

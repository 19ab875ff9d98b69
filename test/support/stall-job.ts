import type Bull from 'bull';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { WEBHOOK_QUEUE_NAME } from '../../shared/queue/webhook-queue.ts';

/**
 * Another worker (`vanishing`) takes the waiting job `jobId` and dies holding it: its lock is gone,
 * as after lockDuration without renewal, and `checker`'s stalled check finds it. The check runs
 * twice (the first pass marks the active job as suspect, the second moves it back or fails it);
 * bull runs it once per stalled interval, remembered in a key, which is deleted before each pass.
 */
export async function stallJob(parts: {
  vanishing: Bull.Queue;
  checker: Bull.Queue;
  admin: Redis;
  prefix: string;
  jobId: string;
}): Promise<void> {
  const { vanishing, checker, admin, prefix, jobId } = parts;
  expect((await vanishing.getNextJob())?.id).to.equal(jobId);
  await admin.del(`${prefix}:${WEBHOOK_QUEUE_NAME}:${jobId}:lock`);
  const checking = checker as unknown as { moveUnlockedJobsToWait(): Promise<unknown> };
  for (let pass = 0; pass < 2; pass += 1) {
    await admin.del(`${prefix}:${WEBHOOK_QUEUE_NAME}:stalled-check`);
    await checking.moveUnlockedJobsToWait();
  }
}

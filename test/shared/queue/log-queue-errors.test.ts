import type Bull from 'bull';
import { expect } from 'chai';
import { createWebhookQueue, type WebhookJobData } from '../../../shared/queue/webhook-queue.ts';
import { LOCK_NOT_RENEWED, logQueueErrors } from '../../../shared/queue/log-queue-errors.ts';
import { recordingLogger } from '../../support/recording-logger.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { useRefusableRedis } from '../../support/use-refusable-redis.ts';
import { waitFor } from '../../support/wait-for.ts';

describe('logQueueErrors: what bull swallows, said', function () {
  this.timeout(30_000);
  const redis = useRefusableRedis();
  const prefix = useQueuePrefix();
  let queue: Bull.Queue<WebhookJobData> | undefined;
  afterEach(async () => {
    await redis.promote();
    await queue?.close().catch(() => undefined);
    queue = undefined;
  });

  // A Redis that stops taking writes (a failover, out of memory) while a job runs: bull's lock
  // renewal fails once and it never renews that lock again, so the job stalls and runs twice; it
  // used to say nothing at all.
  it("says each job lock it could not renew, with the job, and the queue's errors once per interval", async () => {
    const { logger, lines } = recordingLogger();
    queue = createWebhookQueue({ redis: redis.url, prefix }, undefined, undefined, 1_000);
    const stop = logQueueErrors(queue, logger, {
      name: 'webhook',
      jobFields: (job) => ({ key: job.data.dedupeKey }),
    });
    const data: WebhookJobData = {
      dedupeKey: 'a'.repeat(64),
      webhook: 'main',
      receivedAt: new Date().toISOString(),
      event: 'comment.didCreate',
      data: {},
    };
    const release = Promise.withResolvers<undefined>();
    const taken = Promise.withResolvers<undefined>();
    void queue.process(2, async () => {
      taken.resolve(undefined);
      await release.promise;
    });
    await queue.add(data, { jobId: data.dedupeKey });
    await taken.promise;
    await redis.demote();
    // Renewed every 500 ms: the next renewal meets READONLY.
    await waitFor(() => lines.some((line) => line.msg === LOCK_NOT_RENEWED), 10_000, 'the lock failure said');
    const lockLine = lines.find((line) => String(line.msg).startsWith('could not renew'));
    expect(lockLine).to.include({ key: data.dedupeKey, jobId: data.dedupeKey });
    expect(String(lockLine?.err)).to.match(/READONLY/);
    // The other slot's fetch fails too, again and again: said once in the interval.
    await waitFor(
      () => lines.some((line) => line.msg === 'webhook queue error (Redis); bull tries again by itself'),
      15_000,
      'the queue error said',
    );
    await new Promise((done) => setTimeout(done, 1_500));
    expect(lines.filter((line) => String(line.msg).startsWith('webhook queue error'))).to.have.length(1);
    stop();
    release.resolve(undefined);
  });
});

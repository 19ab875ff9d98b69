import { expect } from 'chai';
import { RETRY_JITTER } from '../../../shared/queue/capped-exponential-backoff.ts';
import { createRedis, type RedisClient } from '../../../shared/redis/create-redis.ts';
import {
  createWebhookQueue,
  webhookJobOptions,
  webhookRetryDelays,
} from '../../../shared/queue/webhook-queue.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import { waitFor } from '../../support/wait-for.ts';

async function connectedClients(admin: RedisClient): Promise<number> {
  const info = await admin.info('clients');
  return Number(/connected_clients:(\d+)/.exec(info)?.[1]);
}

describe('createWebhookQueue', () => {
  const prefix = useQueuePrefix();
  let admin: RedisClient;
  before(() => {
    admin = createRedis(testStack().redisUrl);
  });
  after(() => admin.disconnect());

  it('closes every Redis connection it opened when the queue is closed', async () => {
    const before = await connectedClients(admin);
    const queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    const processed = new Promise<void>((resolve) => void queue.process(async () => resolve()));
    await queue.add({
      dedupeKey: 'k',
      webhook: 'w',
      receivedAt: new Date().toISOString(),
      event: 'e',
      data: {},
    });
    await processed;
    expect(await connectedClients(admin)).to.be.greaterThan(before);
    await queue.close();
    // Redis sees a closed connection a moment later; a leaked one never goes.
    await waitFor(async () => (await connectedClients(admin)) === before, 5_000, 'the connections to close');
  });

  it("retries a failed job after the policy's first wait (the backoff strategy is registered)", async function () {
    this.timeout(10_000);
    const queue = createWebhookQueue({ redis: testStack().redisUrl, prefix: `${prefix}-retry` });
    try {
      const attemptsAt: number[] = [];
      const done = new Promise<void>((resolve) => {
        void queue.process(async () => {
          attemptsAt.push(Date.now());
          if (attemptsAt.length === 1) throw new Error('first attempt fails');
          resolve();
        });
      });
      await queue.add(
        { dedupeKey: 'r', webhook: 'w', receivedAt: new Date().toISOString(), event: 'e', data: {} },
        webhookJobOptions,
      );
      await done;
      const [first = 0, second = 0] = attemptsAt;
      // At least the first wait (1 s) less its jitter; bull promotes delayed jobs on a timer, so
      // not exactly.
      expect(second - first).to.be.at.least(webhookRetryDelays.firstMs * (1 - RETRY_JITTER));
    } finally {
      await queue.close();
    }
  });

  it("with lockMs, a job whose worker stopped renewing its lock runs again on another worker within a few of them, not bull's 30 s", async function () {
    // Bull's default lock and stalled check (30 s each) would take 30 to 90 s: past this timeout.
    this.timeout(10_000);
    const lockMs = 1_000;
    const connection = { redis: testStack().redisUrl, prefix: `${prefix}-lock` };
    // getNextJob takes the job and its lock without renewing it, as a worker that died would.
    const dead = createWebhookQueue(connection, undefined, undefined, lockMs);
    const alive = createWebhookQueue(connection, undefined, undefined, lockMs);
    try {
      const added = await dead.add(
        { dedupeKey: 's', webhook: 'w', receivedAt: new Date().toISOString(), event: 'e', data: {} },
        { ...webhookJobOptions, jobId: 's' },
      );
      const held = await dead.getNextJob();
      expect(held?.id, 'the job the dead worker took').to.equal(added.id);
      const ranAgain = new Promise<string>((resolve) => {
        void alive.process(async (job) => resolve(String(job.id)));
      });
      expect(await ranAgain).to.equal(String(added.id));
      const admin = createRedis(testStack().redisUrl);
      try {
        const stalls = await admin.hget(`${connection.prefix}:webhook-events:s`, 'stalledCounter');
        expect(stalls, 'recovered as stalled, not run twice by chance').to.equal('1');
      } finally {
        admin.disconnect();
      }
    } finally {
      await alive.close();
      await dead.close();
    }
  });

  // bull adds the error's stack trace to a job's hash at every attempt and trims it only to
  // stackTraceLimit: a dead letter kept twenty (about 20 kB), never removed, and a replay that
  // failed again added twenty more; a poison class of events filled a noeviction Redis.
  it('keeps one stack trace on a failed job, whatever its attempts', async function () {
    this.timeout(10_000);
    const queue = createWebhookQueue({ redis: testStack().redisUrl, prefix: `${prefix}-traces` });
    try {
      const failed = new Promise<void>((resolve) =>
        queue.on('failed', (job) => job.attemptsMade === 3 && resolve()),
      );
      void queue.process(async () => {
        throw new Error('this event always fails');
      });
      const job = await queue.add(
        { dedupeKey: 't', webhook: 'w', receivedAt: new Date().toISOString(), event: 'e', data: {} },
        { ...webhookJobOptions, jobId: 't', attempts: 3, backoff: 0 },
      );
      await failed;
      const stored = await queue.getJob(String(job.id));
      expect(stored?.stacktrace).to.have.lengthOf(1);
      expect(stored?.stacktrace[0]).to.include('this event always fails');
    } finally {
      await queue.close();
    }
  });
});

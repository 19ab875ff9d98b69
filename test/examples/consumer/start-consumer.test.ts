import { expect } from 'chai';
import { RETRY_JITTER } from '../../../shared/queue/capped-exponential-backoff.ts';
import {
  createWebhookQueue,
  webhookJobOptions,
  webhookRetryDelays,
} from '../../../shared/queue/webhook-queue.ts';
import { Redis } from 'ioredis';
import { useRefusableRedis } from '../../support/use-refusable-redis.ts';
import { stallJob } from '../../support/stall-job.ts';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import {
  startConsumer,
  type RunningConsumer,
  type WebhookEvent,
} from '../../../examples/consumer/start-consumer.ts';
import {
  channelDidCreate,
  signedHeaders,
  standardEvent,
  standardHeaders,
  testSecret,
  testStandardSecret,
} from '../../receiver/support/signed-request.ts';
import { useReceiver } from '../../receiver/support/use-receiver.ts';
import { freePort, startRedis, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import { cleanEnv, repoRoot, runScript, startScript } from '../../support/run-script.ts';
import { runHungConsumerProgram } from '../../support/hung-consumer-program.ts';
import { testStack } from '../../support/test-stack.ts';
import { waitFor } from '../../support/wait-for.ts';

describe('the example consumer (examples/consumer) on the receiver’s real queue', () => {
  const receiver = useReceiver({
    secrets: `default=${testSecret},acme=${testStandardSecret}`,
    schemes: 'acme=standard-webhooks',
  });
  let consumer: RunningConsumer | undefined;
  afterEach(async () => {
    await consumer?.close();
    consumer = undefined;
  });

  const deliver = async (body: string) => {
    await request(receiver().app).post('/webhooks').set(signedHeaders(body)).send(body).expect(200);
  };

  describe('with signed deliveries accepted by the receiver', () => {
    it('hands each event to the user function once, with its name, payload, key, webhook and time', async () => {
      const seen: WebhookEvent[] = [];
      consumer = startConsumer({ redis: testStack().redisUrl, prefix: receiver().prefix }, (event) => {
        seen.push(event);
      });
      const bodies = [channelDidCreate('consumer-1'), channelDidCreate('consumer-2')];
      for (const body of bodies) await deliver(body);
      await deliver(bodies[0] ?? ''); // a redelivery: the receiver drops it, so the consumer never sees it
      await waitFor(() => seen.length >= 2, 10_000, 'two events');
      await new Promise((resolve) => setTimeout(resolve, 300));

      expect(seen).to.have.lengthOf(2);
      const channelIds = seen.map((event) => (event.data.channel as { channelId: string }).channelId).sort();
      expect(channelIds).to.deep.equal(['consumer-1', 'consumer-2']);
      for (const event of seen) {
        expect(event.event).to.equal('channel.didCreate');
        expect(event.key).to.match(/^[0-9a-f]{64}$/);
        expect(event.webhook).to.equal('default');
        expect(event.scheme).to.equal('platform');
        expect(event.attempt).to.equal(1);
        expect(Date.now() - event.receivedAt.getTime()).to.be.within(0, 30_000);
      }
    });
  });

  describe('with a Standard Webhooks sender beside the platform', () => {
    it('tells which scheme verified each event, so a handler can tell the senders apart', async () => {
      const seen: WebhookEvent[] = [];
      consumer = startConsumer({ redis: testStack().redisUrl, prefix: receiver().prefix }, (event) => {
        seen.push(event);
      });
      const body = standardEvent('inv-consumer');
      await request(receiver().app).post('/webhooks').set(standardHeaders(body)).send(body).expect(200);
      await waitFor(() => seen.length >= 1, 10_000, 'the event');
      expect(seen[0]).to.include({ event: 'invoice.paid', webhook: 'acme', scheme: 'standard-webhooks' });
    });
  });

  describe('when the user function throws', () => {
    it('the job is retried with backoff and the event comes again, as attempt 2', async () => {
      const attempts: number[] = [];
      const times: number[] = [];
      consumer = startConsumer({ redis: testStack().redisUrl, prefix: receiver().prefix }, (event) => {
        attempts.push(event.attempt);
        times.push(performance.now());
        if (event.attempt === 1) throw new Error('downstream unavailable');
      });
      const completedBefore = await consumer.queue.getCompletedCount();
      await deliver(channelDidCreate('consumer-retry'));
      await waitFor(() => attempts.length >= 2, 10_000, 'the retry');
      expect(attempts).to.deep.equal([1, 2]);
      // The first retry's wait: a second, less its jitter (at most a fifth).
      expect(times[1]! - times[0]!, 'the wait before attempt 2').to.be.at.least(
        webhookRetryDelays.firstMs * (1 - RETRY_JITTER),
      );
      const queue = consumer.queue;
      await waitFor(async () => (await queue.getCompletedCount()) > completedBefore, 5_000, 'the completion');
      expect(await queue.getCompletedCount()).to.equal(completedBefore + 1);
      expect(await queue.getFailedCount()).to.equal(0);
    });
  });

  // A handler that kept throwing spent its 20 attempts in minutes and its job went to the failed set
  // in silence: nothing told the customer there was something to replay.
  describe('when the user function throws on every attempt', () => {
    it('tells onFailed of each attempt, the last one as final', async () => {
      const failures: { attempt: number; final: boolean; message: string }[] = [];
      consumer = startConsumer(
        {
          redis: testStack().redisUrl,
          prefix: receiver().prefix,
          onFailed: ({ event, error, final }) =>
            failures.push({ attempt: event.attempt, final, message: error.message }),
        },
        () => {
          throw new Error('downstream refuses it');
        },
      );
      // Two attempts 10 ms apart, rather than the receiver's 20 over minutes.
      await consumer.queue.add(
        {
          dedupeKey: 'consumer-always-fails',
          webhook: 'default',
          scheme: 'platform',
          receivedAt: new Date().toISOString(),
          event: 'channel.didCreate',
          data: {},
        },
        { jobId: 'consumer-always-fails', attempts: 2, backoff: { type: 'fixed', delay: 10 } },
      );
      await waitFor(() => failures.length >= 2, 10_000, 'both attempts');
      expect(failures).to.deep.equal([
        { attempt: 1, final: false, message: 'downstream refuses it' },
        { attempt: 2, final: true, message: 'downstream refuses it' },
      ]);
    });
  });

  // A job whose worker stops holding it mid-job too often (killed, say, by the job itself) is failed
  // by bull's stalled check, which runs no handler code: it went to the failed set in silence.
  describe('when a job stalls more often than bull allows', () => {
    it('tells onFailed of it as final', async function () {
      this.timeout(30_000);
      const prefix = receiver().prefix;
      const failures: { key: string; final: boolean; message: string }[] = [];
      consumer = startConsumer(
        {
          redis: testStack().redisUrl,
          prefix,
          onFailed: ({ event, error, final }) =>
            failures.push({ key: event.key, final, message: error.message }),
        },
        () => undefined,
      );
      // This consumer takes no job; another takes it and dies holding it, again and again.
      await consumer.queue.pause(true, true);
      const vanishing = createWebhookQueue({ redis: testStack().redisUrl, prefix });
      const admin = new Redis(testStack().redisUrl);
      try {
        const job = await vanishing.add(
          {
            dedupeKey: 'consumer-stalls',
            webhook: 'default',
            scheme: 'platform',
            receivedAt: new Date().toISOString(),
            event: 'channel.didCreate',
            data: {},
          },
          { ...webhookJobOptions, jobId: 'consumer-stalls' },
        );
        const checker = consumer.queue;
        for (let stalls = 0; (await job.getState()) === 'waiting' && stalls < 20; stalls += 1)
          await stallJob({ vanishing, checker, admin, prefix, jobId: 'consumer-stalls' });
        expect(await job.getState()).to.equal('failed');
        await waitFor(() => failures.length > 0, 5_000, 'onFailed');
        expect(failures).to.deep.equal([
          { key: 'consumer-stalls', final: true, message: 'job stalled more than allowable limit' },
        ]);
      } finally {
        await vanishing.close();
        admin.disconnect();
      }
    });
  });

  // bull's close waits for the jobs in progress without a limit: a hung handler kept the process
  // up after SIGTERM until the orchestrator killed it.
  describe('closing while the user function hangs', () => {
    it('answers `timed out` at the deadline instead of waiting for the job', async () => {
      let started = false;
      consumer = startConsumer({ redis: testStack().redisUrl, prefix: receiver().prefix }, () => {
        started = true;
        return new Promise<void>(() => undefined);
      });
      await deliver(channelDidCreate('consumer-hangs'));
      await waitFor(() => started, 10_000, 'the job to start');
      const closing = performance.now();
      expect(await consumer.close(300)).to.equal('timed out');
      expect(performance.now() - closing, 'ms to close').to.be.below(5_000);
      consumer = undefined;
      // Closed means closed: its blocking read, still waiting on Redis, took the next event into the
      // hung process, where no other consumer could take it while that process lived.
      await deliver(channelDidCreate('consumer-after-close'));
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const reader = createWebhookQueue({ redis: testStack().redisUrl, prefix: receiver().prefix });
      try {
        expect(await reader.getActiveCount(), 'jobs held: the hung one only').to.equal(1);
        expect(await reader.getWaitingCount(), 'the event delivered after the close').to.equal(1);
      } finally {
        await reader.close();
      }
    });
  });

  // A program that closes its consumer past the deadline and does not call process.exit must end:
  // bull's timers and the dropped connections' socket timeouts kept it alive 15 s and more.
  describe('a program whose close timed out', () => {
    it('ends by itself', async () => {
      const started = performance.now();
      const running = runHungConsumerProgram(testStack().redisUrl, receiver().prefix);
      await deliver(channelDidCreate('consumer-exits'));
      const result = await running;
      expect(result, result.stderr).to.include({ code: 0, stdout: 'timed out\n' });
      expect(performance.now() - started, 'ms to exit').to.be.below(5_000);
    });
  });

  describe('run as a program (npm run example:consumer)', () => {
    it('prints one line per event it takes from the queue', async () => {
      const { child, output } = await startScript(
        'examples/consumer/main.ts',
        cleanEnv({ REDIS_URL: testStack().redisUrl, QUEUE_PREFIX: receiver().prefix }),
        /consuming webhook-events/,
      );
      try {
        await deliver(channelDidCreate('consumer-program'));
        await waitFor(
          () => /channel\.didCreate [0-9a-f]{64} \(attempt 1\)/.test(output()),
          10_000,
          'the line',
        );
      } finally {
        child.kill('SIGTERM');
      }
    });
  });

  describe('run as a program, when Redis cannot be used', () => {
    let dir: string;
    let redis: LocalServer;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'consumer-auth-'));
      redis = await startRedis({ dir, password: 'the-right-one' });
    });
    after(async () => {
      await redis.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('a wrong password: one line naming the Redis (not the password), exit 1', async () => {
      const result = await runScript(
        'examples/consumer/main.ts',
        [],
        cleanEnv({ REDIS_URL: `redis://:not-this-one@127.0.0.1:${redis.port}` }),
        10_000,
      );
      expect(result.code).to.equal(1);
      expect(result.stderr).to.match(
        new RegExp(
          `^error: Redis at 127\\.0\\.0\\.1:${redis.port} did not accept the credentials: (WRONGPASS|NOAUTH)\n$`,
        ),
      );
    });

    it('an unreachable Redis: one line saying it is retrying, and it keeps running', async () => {
      const port = await freePort();
      const child = spawn(process.execPath, [join(repoRoot, 'examples/consumer/main.ts')], {
        env: cleanEnv({ REDIS_URL: `redis://:not-this-one@127.0.0.1:${port}` }),
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      try {
        await waitFor(() => stderr.includes('\n'), 10_000, 'a line on stderr');
        // Several reconnection attempts later, still the one line and still running.
        await new Promise((resolve) => setTimeout(resolve, 2_500));
        expect(stderr).to.equal(`cannot reach Redis at 127.0.0.1:${port}: ECONNREFUSED; retrying\n`);
        expect(child.exitCode).to.equal(null);
      } finally {
        child.kill('SIGKILL');
      }
    });
  });

  // An ACL user without channel access (Redis 7's default for new users): bull's set-up fails on
  // SUBSCRIBE and it takes no job for the life of the process, which said "retrying" and stayed up.
  describe('run as a program, when bull cannot start taking jobs', () => {
    const redis = useRefusableRedis();
    it('one line naming the Redis and the refusal, exit 1', async () => {
      const url = await redis.userUrl('consumer-no-channels', 'consumer-no-channels-password');
      await redis.admin.call('ACL', 'SETUSER', 'consumer-no-channels', 'resetchannels');
      const result = await runScript('examples/consumer/main.ts', [], cleanEnv({ REDIS_URL: url }), 10_000);
      expect(result.code).to.equal(1);
      const port = new URL(redis.url).port;
      expect(result.stderr).to.match(
        new RegExp(
          `^error: the consumer could not start taking jobs from Redis at 127\\.0\\.0\\.1:${port}: NOPERM[^\n]*\n$`,
        ),
      );
      expect(result.stderr).to.not.include('consumer-no-channels-password');
    });
  });
});

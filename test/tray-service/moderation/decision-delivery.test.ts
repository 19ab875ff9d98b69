import { expect } from 'chai';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { parseBlockedWords } from '../../../tray-service/domain/blocked-words.ts';
import { createBlockedWordsRule } from '../../../tray-service/moderation/blocked-words-rule.ts';
import { createModerationStep } from '../../../tray-service/moderation/create-moderation-step.ts';
import { CAPPED_EXPONENTIAL } from '../../../shared/queue/capped-exponential-backoff.ts';
import {
  createDecisionEnqueuer,
  createDecisionsQueue,
  DECISION_MAX_BACKOFF_MS,
  decisionRetryDelay,
  startDecisionDelivery,
  type DecisionJobData,
} from '../../../tray-service/moderation/decision-delivery.ts';
import { WEBHOOK_MAX_STALLED_COUNT } from '../../../shared/queue/webhook-queue.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { LOCK_NOT_RENEWED } from '../../../shared/queue/log-queue-errors.ts';
import { recordingLogger } from '../../support/recording-logger.ts';
import { useRefusableRedis } from '../../support/use-refusable-redis.ts';
import { waitFor } from '../../support/wait-for.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { useStoppablePostgres } from '../../support/use-stoppable-postgres.ts';
import { usePostgres } from '../../support/use-postgres.ts';
import pg from 'pg';
import { testStack } from '../../support/test-stack.ts';
import { eventDoc } from '../admin/admin-fixtures.ts';
import type { DecisionsPort } from '../../../tray-service/storage/port.ts';
import { eventually, startStatusServer, type StatusAnswer } from './moderation-fixtures.ts';
import type { BullQueue } from '../../../shared/queue/create-bull-queue.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const rule = createBlockedWordsRule(parseBlockedWords(['spam'], 'exact'));

/** The decision of the event `eventKey` once its delivery is no longer pending (delivered or failed). */
async function settledDecision(decisions: DecisionsPort, eventKey: string) {
  const [pending] = (await decisions.list({ eventKey }, 10)).items;
  return eventually(async () => {
    const doc = await decisions.get(pending!.id);
    return doc?.delivery === 'pending' ? undefined : doc;
  });
}

describe('moderation decision delivery', () => {
  const suite = useTrayStorage();

  async function setup(
    statuses: StatusAnswer[],
    attempts: number,
    options: {
      url?: (serverUrl: string) => string;
      logger?: typeof logger;
      /** The queue's job lock and stalled check (bull's 30 s when not given). */
      lockMs?: number;
      timeoutMs?: number;
      /** The first retry's wait (20 ms when not given), doubling per attempt. */
      backoffMs?: number;
      concurrency?: number;
      /** Those of the real decisions' calls that fail first, once each (the database answering no). */
      failFirst?: readonly ('markDelivered' | 'markAttemptFailed')[];
      /** The record of the first final failed attempt fails (the database answering no). */
      failFinalRecord?: boolean;
      /** While `value` is true, reads of decisions and pings fail (the database gone). */
      storageDown?: { value: boolean };
      /** The first `times` calls of `call` fail with `error` (one the database gave), the ping passing. */
      storageErrors?: { call: 'get' | 'markDelivered'; error: Error; times: number };
    } = {},
  ) {
    const server = await startStatusServer(statuses);
    const queue: BullQueue<DecisionJobData> = createDecisionsQueue(
      { redis: testStack().redisUrl, prefix: useQueuePrefix() },
      options.lockMs,
    );
    const decisions = suite.storage.decisions;
    const failing = new Set(options.failFirst);
    let failFinal = options.failFinalRecord === true;
    const failOnce = (name: 'markDelivered' | 'markAttemptFailed') => {
      if (!failing.delete(name)) return;
      throw new Error(`database unavailable (${name})`);
    };
    const down = options.storageDown ?? { value: false };
    const gone = () => Promise.reject(new Error('database gone (the test)'));
    const storageErrors = options.storageErrors && { ...options.storageErrors };
    const failWith = (call: 'get' | 'markDelivered') => {
      if (storageErrors?.call !== call || storageErrors.times <= 0) return;
      storageErrors.times -= 1;
      throw storageErrors.error;
    };
    const delivery = startDecisionDelivery({
      queue,
      ping: () => (down.value ? gone() : suite.storage.ping()),
      decisions: {
        get: async (id) => {
          failWith('get');
          return down.value ? gone() : decisions.get(id);
        },
        markDelivered: async (...args) => {
          failWith('markDelivered');
          failOnce('markDelivered');
          return decisions.markDelivered(...args);
        },
        markAttemptFailed: async (...args) => {
          failOnce('markAttemptFailed');
          if (args[3] && failFinal) {
            failFinal = false;
            throw new Error('database unavailable (markAttemptFailed, final)');
          }
          return decisions.markAttemptFailed(...args);
        },
      },
      url: options.url ? options.url(server.url) : server.url,
      secret: 's'.repeat(32),
      timeoutMs: options.timeoutMs ?? 2_000,
      logger: options.logger ?? logger,
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
      storageBusyFirstWaitMs: 10,
    });
    const step = createModerationStep({
      rules: [rule],
      decisions,
      enqueue: createDecisionEnqueuer(queue, { attempts, backoffMs: options.backoffMs ?? 20 }),
      logger,
    });
    const close = async () => {
      await delivery.close();
      await server.close();
    };
    return { server, decisions, step, close, queue, delivery };
  }

  describe('to an endpoint that fails twice, then succeeds', () => {
    it('retries with backoff and records the delivery after the third attempt', async () => {
      const { server, decisions, step, close } = await setup([500, 503, 200], 5, { backoffMs: 200 });
      try {
        const event = eventDoc({ data: { post: { postId: 'p-1', postedUserId: 'u-x', text: 'spam' } } });
        await step(event);
        const [pending] = (await decisions.list({ eventKey: event.key }, 10)).items;
        const delivered = await eventually(async () => {
          const doc = await decisions.get(pending!.id);
          return doc?.delivery === 'delivered' ? doc : undefined;
        });
        expect(delivered.deliveryAttempts).to.equal(3);
        expect(delivered.lastError).to.equal(undefined);
        expect(server.requests).to.have.lengthOf(3);
        // 200 ms, then 400 ms, less their jitter (at most a fifth).
        const [first, second, third] = server.requests.map((req) => req.at);
        expect(second! - first!, 'the first retry’s wait').to.be.at.least(160);
        expect(third! - second!, 'the second retry’s wait').to.be.at.least(320);
        for (const req of server.requests) {
          expect(req.headers['idempotency-key']).to.equal(pending!.id);
          expect(req.headers['content-type']).to.equal('application/json');
          expect(JSON.parse(req.body)).to.include({
            id: pending!.id,
            eventKey: event.key,
            rule: 'blocked-words',
            action: 'flag',
            reason: 'blocklisted word: "spam"',
            userId: 'u-x',
          });
        }
      } finally {
        await close();
      }
    });
  });

  // At shutdown the HTTP drain may take seconds: deliveries taken meanwhile held the shutdown past
  // its deadline, each for up to MODERATION_WEBHOOK_TIMEOUT_MS.
  describe('stopped from taking deliveries (a shutdown)', () => {
    it('takes no delivery after it, and its close waits only for the one in hand', async function () {
      this.timeout(20_000);
      // Timeouts long enough that a close sending the queued ones (4 s at least) cannot pass for a
      // right one delayed by a loaded machine.
      const timeoutMs = 2_000;
      const { server, step, close, delivery } = await setup(['hang'], 1, { concurrency: 1, timeoutMs });
      try {
        for (const n of [1, 2, 3]) {
          await step(eventDoc({ data: { post: { postId: `p-stop-${n}`, text: 'spam' } } }));
        }
        await eventually(async () => (server.requests.length >= 1 ? true : undefined));
        await delivery.stopTaking();
        // Past the first delivery's timeout: a consumer still taking jobs would send the next.
        await new Promise((resolve) => setTimeout(resolve, timeoutMs + 500));
        expect(server.requests).to.have.lengthOf(1);
        // The one in hand has timed out: a close that drained the two queued behind it would send
        // them (counted below) and wait for their timeouts, 2 s each.
        const started = performance.now();
        await delivery.close();
        expect(performance.now() - started, 'the close’s wait').to.be.below(3_000);
        expect(server.requests).to.have.lengthOf(1);
      } finally {
        await close();
      }
    });
  });

  // The storage gate resumed the queue when its storage came back, whatever had paused it: an
  // outage ending during the shutdown's drain undid stopTaking, and deliveries were taken again.
  describe('stopped from taking deliveries while its storage is down', () => {
    it('takes none either once the storage comes back', async () => {
      const { logger: recording, messages } = recordingLogger();
      const storageDown = { value: true };
      const { server, step, close, delivery } = await setup([200, 200], 1, {
        storageDown,
        logger: recording,
      });
      try {
        await step(eventDoc({ data: { post: { postId: 'p-gate-1', text: 'spam' } } }));
        await eventually(
          async () => messages.some((m) => m.startsWith('storage does not answer')) || undefined,
        );
        await delivery.stopTaking();
        storageDown.value = false;
        await eventually(
          async () => messages.some((m) => m.startsWith('storage answers again')) || undefined,
        );
        // The delivery in hand goes on; a new one is not taken.
        await eventually(async () => (server.requests.length >= 1 ? true : undefined));
        await step(eventDoc({ data: { post: { postId: 'p-gate-2', text: 'spam' } } }));
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        expect(server.requests).to.have.lengthOf(1);
      } finally {
        await close();
      }
    });
  });

  describe('to an endpoint that always fails', () => {
    it('gives up after the configured attempts and marks the decision failed', async () => {
      const { server, decisions, step, close } = await setup([500], 2);
      try {
        const event = eventDoc({ data: { post: { postId: 'p-2', text: 'spam' } } });
        await step(event);
        const [pending] = (await decisions.list({ eventKey: event.key }, 10)).items;
        const failed = await eventually(async () => {
          const doc = await decisions.get(pending!.id);
          return doc?.delivery === 'failed' ? doc : undefined;
        });
        expect(failed).to.include({ deliveryAttempts: 2, lastError: 'moderation webhook answered HTTP 500' });
        expect(server.requests).to.have.lengthOf(2);
      } finally {
        await close();
      }
    });
  });

  describe('to a URL carrying a password (which the configuration refuses)', () => {
    it('keeps the password out of the log and of the stored lastError', async () => {
      const lines: string[] = [];
      const sink = new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString());
          done();
        },
      });
      const { decisions, step, close, queue } = await setup([200], 1, {
        url: (serverUrl) => serverUrl.replace('http://', 'http://hook:S3cretPass@'),
        logger: pino({ level: 'info' }, sink),
      });
      try {
        const event = eventDoc({ data: { post: { postId: 'p-4', text: 'spam' } } });
        await step(event);
        const [pending] = (await decisions.list({ eventKey: event.key }, 10)).items;
        const failed = await eventually(async () => {
          const doc = await decisions.get(pending!.id);
          return doc?.delivery === 'failed' ? doc : undefined;
        });
        await eventually(async () =>
          lines.some((line) => line.includes('decision delivery failed')) ? true : undefined,
        );
        expect(failed.lastError).to.be.a('string').and.not.include('S3cretPass');
        expect(failed.lastError).to.include('//***@127.0.0.1');
        expect(lines.join('')).to.not.include('S3cretPass');
        // bull keeps the failure in Redis too, where the queue dashboard shows it.
        const job = await queue.getJob(pending!.id);
        expect(JSON.stringify([job?.failedReason, job?.stacktrace])).to.not.include('S3cretPass');
      } finally {
        await close();
      }
    });
  });

  describe('when its workers die mid-delivery more often than a job may stall', () => {
    it('marks the decision failed: bull gave up on its job, whatever attempts it had left', async function () {
      this.timeout(30_000);
      const { server, decisions, step, close, queue } = await setup(['hang'], 5, {
        lockMs: 200,
        timeoutMs: 10_000,
        // Each stalled pickup hangs in a slot of its own until the timeout.
        concurrency: 10,
      });
      try {
        const event = eventDoc({ data: { post: { postId: 'p-5', text: 'spam' } } });
        await step(event);
        const [pending] = (await decisions.list({ eventKey: event.key }, 10)).items;
        // A worker that dies leaves its job's lock to expire: deleted here while each delivery
        // hangs, the job is found stalled at the next check and picked up again, until it has
        // stalled more than WEBHOOK_MAX_STALLED_COUNT times.
        const lockKey = `${queue.toKey(pending!.id)}:lock`;
        const failed = await eventually(async () => {
          await queue.client.del(lockKey);
          const doc = await decisions.get(pending!.id);
          return doc?.delivery === 'failed' ? doc : undefined;
        }, 50);
        expect(failed.lastError).to.equal('job stalled more than allowable limit');
        expect(server.requests.length).to.be.above(WEBHOOK_MAX_STALLED_COUNT);
        expect(await (await queue.getJob(pending!.id))?.isFailed()).to.equal(true);
      } finally {
        await close();
      }
    });
  });

  // A failed last attempt the database did not record leaves the decision pending and its job in
  // the failed set; moderating the event again (a replay) sends it again. bull's retry() kept the
  // attempts the job had spent, so after several its first failure sent it straight back to the
  // failed set, with no backoff, the decision marked failed.
  describe('when the database does not record a failed last attempt, and the event is moderated again', () => {
    const cases = [
      {
        name: 'sends the pending decision again',
        statuses: [500, 200],
        attempts: 1,
        options: { failFirst: ['markAttemptFailed'] as const },
      },
      {
        name: 'sends it again with all its attempts and their backoff, after the last of several',
        statuses: [500, 500, 500, 200],
        attempts: 2,
        options: { failFinalRecord: true },
      },
    ];
    for (const [n, { name, statuses, attempts, options }] of cases.entries()) {
      it(name, async () => {
        const { server, decisions, step, close, queue } = await setup(statuses, attempts, options);
        try {
          const event = eventDoc({ data: { post: { postId: `p-replayed-${n}`, text: 'spam' } } });
          await step(event);
          const [pending] = (await decisions.list({ eventKey: event.key }, 10)).items;
          await eventually(async () =>
            (await (await queue.getJob(pending!.id))?.isFailed()) ? true : undefined,
          );
          expect((await decisions.get(pending!.id))?.delivery).to.equal('pending');
          await step(event);
          const settled = await eventually(async () => {
            const doc = await decisions.get(pending!.id);
            return doc?.delivery === 'pending' ? undefined : doc;
          });
          expect(settled).to.include({ id: pending!.id, delivery: 'delivered' });
          expect(server.requests).to.have.lengthOf(statuses.length);
        } finally {
          await close();
        }
      });
    }
  });

  // A decision delivered, then purged with its event (a short EVENTS_RETENTION_DAYS), and saved
  // again pending when the event came back (a redelivery, a replay): its delivered job, kept a
  // week, made bull's add queue nothing, and the decision stayed pending for good, never purged.
  describe('when a purged decision is saved again while its delivered job is kept', () => {
    it('delivers it again', async () => {
      const { server, decisions, step, close } = await setup([200, 200], 1);
      try {
        const first = eventDoc({
          data: { post: { postId: 'p-purged', text: 'spam' } },
          expiresAt: new Date(Date.now() + 1_000),
        });
        await step(first);
        const delivered = await settledDecision(decisions, first.key);
        expect(delivered.delivery).to.equal('delivered');
        await new Promise((resolve) => setTimeout(resolve, 1_100));
        await suite.storage.purgeExpired(new Date());
        expect(await decisions.get(delivered.id)).to.equal(undefined);
        await step({ ...first, expiresAt: new Date(Date.now() + 60_000) });
        const again = await settledDecision(decisions, first.key);
        expect(again).to.include({ id: delivered.id, delivery: 'delivered' });
        expect(server.requests).to.have.lengthOf(2);
      } finally {
        await close();
      }
    });
  });

  describe('when the endpoint takes the last attempt but the database does not record it at once', () => {
    it('records the decision delivered, not failed', async () => {
      const { server, decisions, step, close } = await setup([200], 1, { failFirst: ['markDelivered'] });
      try {
        const event = eventDoc({ data: { post: { postId: 'p-7', text: 'spam' } } });
        await step(event);
        const settled = await settledDecision(decisions, event.key);
        expect(settled.delivery).to.equal('delivered');
        expect(server.requests).to.have.lengthOf(1);
      } finally {
        await close();
      }
    });
  });

  // A database that answers its ping but refuses writes (a standby after a failover, a full disk)
  // or says "not now" (a statement timeout) is not the delivery's fault: spending attempts, the
  // endpoint had the decision again on every one, and the last left it pending or failed for good.
  describe('when its database answers but refuses writes or says "not now"', () => {
    const provoked = async (...statements: string[]) => {
      const client = new pg.Client({ connectionString: postgres.url });
      await client.connect();
      try {
        for (const statement of statements) await client.query(statement);
      } catch (error) {
        return error as Error;
      } finally {
        await client.end();
      }
      throw new Error('the database gave no error');
    };
    const postgres = usePostgres();
    /** A spam post's decision, delivered with `storageErrors` on the way: recorded, sent once. */
    const expectDeliveredOnce = async (
      postId: string,
      attempts: number,
      storageErrors: NonNullable<Parameters<typeof setup>[2]>['storageErrors'],
    ) => {
      const { server, decisions, step, close } = await setup([200], attempts, { storageErrors });
      try {
        const event = eventDoc({ data: { post: { postId, text: 'spam' } } });
        await step(event);
        const settled = await settledDecision(decisions, event.key);
        expect(settled.delivery).to.equal('delivered');
        expect(server.requests).to.have.lengthOf(1);
      } finally {
        await close();
      }
    };

    it('records a delivery the database refused to record at first, delivering it once', async () => {
      const readOnly = await provoked(
        'SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY',
        'CREATE TABLE never_made (id int)',
      );
      expect((readOnly as { code?: string }).code).to.equal('25006');
      await expectDeliveredOnce('p-ro', 2, { call: 'markDelivered', error: readOnly, times: 3 });
    });

    it('reads the decision again after "not now", without spending its only attempt', async () => {
      const timedOut = await provoked('SET statement_timeout = 1', 'SELECT pg_sleep(1)');
      expect((timedOut as { code?: string }).code).to.equal('57014');
      await expectDeliveredOnce('p-busy', 1, { call: 'get', error: timedOut, times: 2 });
    });
  });

  // The endpoint is the operator's; where it redirects is not: a redirect followed would post the
  // signed decision, with its user ids and reason, to whatever host the answer names.
  describe('to an endpoint that answers with a redirect', () => {
    it('follows none: the attempt fails and the other host is never called', async () => {
      const elsewhere = await startStatusServer([200]);
      const { decisions, step, close, server } = await setup([{ redirectTo: elsewhere.url }], 1);
      try {
        const event = eventDoc({ data: { post: { postId: 'p-redirect', text: 'spam' } } });
        await step(event);
        const failed = await settledDecision(decisions, event.key);
        expect(failed.delivery).to.equal('failed');
        expect(server.requests).to.have.lengthOf(1);
        expect(elsewhere.requests).to.have.lengthOf(0);
      } finally {
        await close();
        await elsewhere.close();
      }
    });
  });

  describe('to an endpoint that never answers', () => {
    it('does not hold up the moderation step (the tray worker)', async () => {
      const timeoutMs = 4_000;
      const { server, step, close } = await setup(['hang'], 1, { timeoutMs });
      try {
        const event = eventDoc({ data: { post: { postId: 'p-3', text: 'spam' } } });
        // The step only stores and enqueues: it resolves long before the delivery could time out,
        // and the delivery's request is made (and left hanging) after it.
        const started = performance.now();
        await step(event);
        expect(performance.now() - started, 'the step (ms)').to.be.below(timeoutMs / 4);
        await eventually(async () => (server.requests.length > 0 ? true : undefined));
      } finally {
        await close();
      }
    });
  });

  describe("retry waits (decisionRetryDelay, the queue's backoff strategy)", () => {
    const never = () => 0;
    it('double from MODERATION_WEBHOOK_BACKOFF_MS up to an hour, never more', () => {
      const options = { firstMs: 1_000, maxMs: DECISION_MAX_BACKOFF_MS };
      expect([1, 2, 3, 4].map((made) => decisionRetryDelay(made, options, never))).to.deep.equal([
        1_000, 2_000, 4_000, 8_000,
      ]);
      expect(decisionRetryDelay(13, options, never)).to.equal(DECISION_MAX_BACKOFF_MS);
      expect(
        decisionRetryDelay(99, { firstMs: 3_600_000, maxMs: 10 * DECISION_MAX_BACKOFF_MS }, never),
      ).to.equal(DECISION_MAX_BACKOFF_MS);
      expect(DECISION_MAX_BACKOFF_MS).to.equal(3_600_000);
    });

    it('bound the last attempt: within 99 hours at the largest settings, 511 s at the defaults', () => {
      const total = (attempts: number, firstMs: number) => {
        let ms = 0;
        for (let made = 1; made < attempts; made++) {
          ms += decisionRetryDelay(made, { firstMs, maxMs: DECISION_MAX_BACKOFF_MS }, never);
        }
        return ms;
      };
      expect(total(100, 3_600_000)).to.equal(99 * 3_600_000);
      expect(total(100, 1_000)).to.be.at.most(99 * 3_600_000);
      expect(total(10, 1_000)).to.equal(511_000);
    });

    it('fall back to the defaults for options a job does not carry', () => {
      expect(decisionRetryDelay(2, undefined, never)).to.equal(2_000);
      expect(decisionRetryDelay(2, { firstMs: 'x' }, never)).to.equal(2_000);
    });
  });

  describe('a decision queue retrying a failing delivery', () => {
    it("waits by the capped strategy, not bull's uncapped exponential", async function () {
      this.timeout(15_000);
      const queue: BullQueue<DecisionJobData> = createDecisionsQueue({
        redis: testStack().redisUrl,
        prefix: useQueuePrefix(),
      });
      try {
        const attemptsAt: number[] = [];
        const attempts = 10;
        const failedForGood = new Promise<void>((resolve) => {
          queue.on('failed', (job) => {
            if (job.attemptsMade >= attempts) resolve();
          });
        });
        void queue.process(async () => {
          attemptsAt.push(Date.now());
          throw new Error('endpoint down');
        });
        await createDecisionEnqueuer(queue, { attempts, backoffMs: 20, maxBackoffMs: 40 })(['d-capped']);
        await failedForGood;
        const job = await queue.getJob('d-capped');
        expect(job?.opts.backoff).to.include({ type: CAPPED_EXPONENTIAL });
        expect(attemptsAt).to.have.lengthOf(attempts);
        // Capped: 20 + 8 x 40 ms of waits. Bull's exponential would wait (2^n - 1) x 20 ms after
        // the nth failure: 20 s in all, 10 s before the last attempt alone.
        expect(attemptsAt.at(-1)! - attemptsAt[0]!).to.be.below(5_000);
        // One stack trace kept on the failed job, not one per attempt.
        expect(job?.stacktrace).to.have.lengthOf(1);
      } finally {
        await queue.close();
      }
    });
  });
});

// The webhook worker holds its jobs while the storage does not answer; the delivery of decisions
// read its decision first and spent an attempt each time that failed: a database out for the
// few minutes the attempts span left every decision queued then failed (or pending for good, when
// the last failure could not be recorded either), though its endpoint was never asked.
describe('moderation decision delivery while its database is down', function () {
  this.timeout(120_000);
  const postgres = useStoppablePostgres();

  it('holds the delivery without spending an attempt, and delivers once the database answers', async () => {
    const storage = await postgres.openStorage();
    const server = await startStatusServer([200]);
    const queue: BullQueue<DecisionJobData> = createDecisionsQueue({
      redis: testStack().redisUrl,
      prefix: useQueuePrefix(),
    });
    const delivery = startDecisionDelivery({
      queue,
      decisions: storage.decisions,
      ping: () => storage.ping(),
      url: server.url,
      secret: 's'.repeat(32),
      timeoutMs: 2_000,
      logger,
    });
    try {
      const step = createModerationStep({
        rules: [rule],
        decisions: storage.decisions,
        enqueue: async () => undefined,
        logger,
      });
      const event = eventDoc({ data: { post: { postId: 'p-down', text: 'spam' } } });
      await step(event);
      const [decision] = (await storage.decisions.list({ eventKey: event.key }, 10)).items;
      await postgres.stop();
      await createDecisionEnqueuer(queue, { attempts: 3, backoffMs: 100 })([decision!.id]);
      // Three attempts at 100, 200 ms would all be spent well within this.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const held = await queue.getJob(decision!.id);
      expect(held?.attemptsMade).to.equal(0);
      expect(await held?.isFailed()).to.equal(false);
      expect(server.requests).to.have.lengthOf(0);
      await postgres.start();
      const delivered = await eventually(async () => {
        const doc = await storage.decisions.get(decision!.id).catch(() => undefined);
        return doc?.delivery === 'delivered' ? doc : undefined;
      });
      expect(delivered.deliveryAttempts).to.equal(1);
      expect(server.requests).to.have.lengthOf(1);
    } finally {
      await delivery.close();
      await server.close();
    }
  });
});

// Bull keeps its queue's Redis errors and lost job locks to itself; the webhook queue's were said,
// the decisions queue's not at all: a decision delivered twice after a lost lock left no trace.
describe("moderation decision delivery: its queue's Redis failures", function () {
  this.timeout(30_000);
  const suite = useTrayStorage();
  const redis = useRefusableRedis();
  afterEach(() => redis.promote());

  it("says each job lock it could not renew, with the decision, and the queue's errors", async () => {
    const { logger: recording, lines } = recordingLogger();
    const queue: BullQueue<DecisionJobData> = createDecisionsQueue(
      { redis: redis.url, prefix: useQueuePrefix() },
      1_000,
    );
    const taken = Promise.withResolvers<undefined>();
    const release = Promise.withResolvers<undefined>();
    const delivery = startDecisionDelivery({
      queue,
      ping: () => suite.storage.ping(),
      decisions: {
        // Holds the delivery in hand while Redis stops taking writes under it.
        get: async (id) => {
          taken.resolve(undefined);
          await release.promise;
          return suite.storage.decisions.get(id);
        },
        markDelivered: (...args) => suite.storage.decisions.markDelivered(...args),
        markAttemptFailed: (...args) => suite.storage.decisions.markAttemptFailed(...args),
      },
      url: 'http://127.0.0.1:9/never-called',
      secret: 's'.repeat(32),
      timeoutMs: 1_000,
      logger: recording,
    });
    try {
      await queue.add({ decisionId: 'd-held' }, { jobId: 'd-held' });
      await taken.promise;
      await redis.demote();
      await waitFor(
        () => lines.some((line) => line.msg === LOCK_NOT_RENEWED),
        10_000,
        'the lock failure said',
      );
      const lockLine = lines.find((line) => String(line.msg).startsWith('could not renew'));
      expect(lockLine).to.include({ decisionId: 'd-held', jobId: 'd-held' });
      await waitFor(
        () => lines.some((line) => line.msg === 'decision queue error (Redis); bull tries again by itself'),
        15_000,
        'the queue error said',
      );
    } finally {
      release.resolve(undefined);
      await redis.promote();
      await delivery.close();
    }
  });

  // A consumer bull could not start takes no delivery for the rest of the process's life.
  it('says a consumer bull could not start, once, and asks the process to stop', async () => {
    const { logger: recording, lines } = recordingLogger();
    const url = await redis.userUrl('decisions-no-subscribe', 'decisions-no-subscribe-password');
    await redis.admin.call('ACL', 'SETUSER', 'decisions-no-subscribe', '-subscribe', '-psubscribe');
    const queue = createDecisionsQueue({ redis: url, prefix: useQueuePrefix() });
    const stops: string[] = [];
    const delivery = startDecisionDelivery({
      queue,
      ping: () => suite.storage.ping(),
      decisions: suite.storage.decisions,
      url: 'http://127.0.0.1:9/never-called',
      secret: 's'.repeat(32),
      timeoutMs: 1_000,
      logger: recording,
      onStopped: (reason) => stops.push(reason),
    });
    try {
      await waitFor(() => stops.length > 0, 10_000, 'the stop asked for');
      expect(stops).to.have.length(1);
      expect(stops[0]).to.match(/^the decision queue's consumer could not start taking jobs: NOPERM/);
      expect(lines.filter((line) => line.level === 60).map((line) => line.msg)).to.deep.equal(stops);
    } finally {
      await delivery.close();
    }
  });
});

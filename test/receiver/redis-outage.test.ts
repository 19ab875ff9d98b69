import { expect } from 'chai';
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import request from 'supertest';
import { dedupeKey } from '../../receiver/dedupe-key.ts';
import { freePort, startRedis, type LocalServer } from '../../scripts/lib/local-servers.ts';
import { createWebhookQueue } from '../../shared/queue/webhook-queue.ts';
import { useQueuePrefix } from '../support/suite-resources.ts';
import { channelDidCreate, signedHeaders } from './support/signed-request.ts';
import { stallDiskCalls } from './support/disk-calls.ts';
import { startTestReceiver, type ReceiverOptions, type TestReceiver } from './support/use-receiver.ts';
import { metricSum } from '../support/metric-sum.ts';
import { waitFor } from '../support/wait-for.ts';

/** The platform's deadline (docs/contract.md#answer) is a contract, checked per request; not a benchmark. */
const ackDeadlineMs = 1_500;

async function deliverTimed(receiver: TestReceiver, body: string): Promise<number> {
  const started = performance.now();
  const res = await request(receiver.app).post('/webhooks').set(signedHeaders(body)).send(body);
  const elapsed = performance.now() - started;
  expect(res.status, `status of ${body.slice(0, 80)}`).to.equal(200);
  expect(res.body).to.deep.equal({});
  expect(elapsed, 'answer time in ms').to.be.below(ackDeadlineMs);
  return elapsed;
}

/**
 * Consumes the whole queue with a real bull worker and returns every job id it processed, in
 * processing order, once `expected` jobs were seen (plus a short wait for any extra one).
 */
async function consumeAll(redisUrl: string, prefix: string, expected: number): Promise<string[]> {
  const queue = createWebhookQueue({ redis: redisUrl, prefix });
  queue.on('error', () => undefined);
  const processed: string[] = [];
  void queue.process(async (job) => void processed.push(String(job.id)));
  try {
    await waitFor(() => processed.length >= expected, 10_000, `${expected} processed jobs`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    return processed;
  } finally {
    await queue.close();
    // bull does not close connections made by a createClient option (shared/queue/webhook-queue.ts).
    const internals = queue as unknown as Record<string, { disconnect(): void } | boolean | undefined>;
    for (const [flag, client] of [
      ['clientInitialized', 'client'],
      ['bclientInitialized', 'bclient'],
      ['subscriberInitialized', 'eclient'],
    ]) {
      const connection = internals[client!];
      if (internals[flag!] === true && typeof connection === 'object') connection.disconnect();
    }
  }
}

/** The receiver's app on a port of its own, for requests whose body comes late (postLate). */
async function listening(receiver: TestReceiver): Promise<Server> {
  const server = createServer(receiver.app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return server;
}

/** The enqueues the receiver's metrics counted, of the outcomes whose labels include `labels`. */
async function enqueuesCounted(receiver: TestReceiver, labels: string): Promise<number> {
  const metrics = (await request(receiver.app).get('/metrics').expect(200)).text;
  return metricSum(metrics, 'webhook_enqueue_duration_seconds_count', labels);
}

/** POSTs a signed `body` whose headers go at once and whose body `lateMs` after; answers the status. */
function postLate(server: Server, body: string, lateMs: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: (server.address() as AddressInfo).port,
        path: '/webhooks',
        method: 'POST',
        headers: { ...signedHeaders(body), 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.flushHeaders();
    setTimeout(() => req.end(body), lateMs);
  });
}

/** A counter of the receiver's /metrics, by a label's value (0 while not reported). */
async function counterOf(receiver: TestReceiver, name: string, label: string): Promise<number> {
  return metricSum((await request(receiver.app).get('/metrics').expect(200)).text, name, label);
}

/** webhook_spool_drained_total of a receiver, by outcome. */
async function drained(receiver: TestReceiver): Promise<{ queued: number; duplicate: number }> {
  return {
    queued: await counterOf(receiver, 'webhook_spool_drained_total', 'outcome="queued"'),
    duplicate: await counterOf(receiver, 'webhook_spool_drained_total', 'outcome="duplicate"'),
  };
}

describe('receiver while Redis is down', function () {
  this.timeout(60_000);
  let dir: string;
  let redis: LocalServer;
  let port: number;
  const receivers: TestReceiver[] = [];
  const start = async (prefix: string, spoolDir: string, options: ReceiverOptions = {}) => {
    const receiver = await startTestReceiver(prefix, {
      redisUrl: redis.url,
      spoolDir,
      drainIntervalMs: 100,
      ...options,
    });
    receivers.push(receiver);
    return receiver;
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'redis-outage-'));
    port = await freePort();
    redis = await startRedis({ dir: join(dir, 'redis'), port, persistent: true });
  });
  afterEach(async () => {
    for (const receiver of receivers.splice(0)) await receiver.close();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('when Redis stops while signed events arrive', () => {
    it('answers each 200 within 1.5 s, spools, and after the restart queues every event exactly once', async () => {
      const prefix = useQueuePrefix();
      const logLines: string[] = [];
      const receiver = await start(prefix, join(dir, 'spool'), { logLines });
      const bodies = Array.from({ length: 30 }, (_, n) => channelDidCreate(`outage-${n}`));

      for (const body of bodies.slice(0, 10)) await deliverTimed(receiver, body);
      expect(receiver.spool.depth()).to.equal(0);
      // Stop Redis while a batch of deliveries is in flight.
      const inFlight = Promise.all(bodies.slice(10, 20).map((body) => deliverTimed(receiver, body)));
      await redis.stop();
      await inFlight;
      for (const body of bodies.slice(20)) await deliverTimed(receiver, body);
      // Redeliveries during the outage: one of an event queued before, one of a spooled event.
      await deliverTimed(receiver, bodies[0]!);
      await deliverTimed(receiver, bodies[25]!);
      expect(receiver.spool.depth()).to.be.at.least(10);
      // Still ready (the spool takes the deliveries), degraded, naming Redis.
      const readiness = await request(receiver.app).get('/readyz').expect(200);
      expect(readiness.body.status).to.equal('degraded');
      expect(readiness.body.checks.redis.ok).to.equal(false);
      // The outage is logged once a reconnect fails (a Redis back before the first retry is not one).
      await waitFor(
        () =>
          logLines.some(
            (line) => line.includes('redis unreachable') && line.includes('"connection":"queue"'),
          ),
        10_000,
        'the outage to be logged',
      );

      redis = await startRedis({ dir: join(dir, 'redis'), port, persistent: true });
      await waitFor(() => receiver.spool.depth() === 0, 15_000, 'the spool to drain');

      const processed = await consumeAll(redis.url, prefix, bodies.length);
      expect([...processed].sort()).to.deep.equal(bodies.map((body) => dedupeKey(Buffer.from(body))).sort());
      expect(readdirSync(receiver.spool.dir)).to.deep.equal([]);
      // What the operator is promised (docs/operations.md): the outage's start and end, once each,
      // at warn and info (they were at debug, so a quiet receiver said nothing of a lost Redis).
      const lines = logLines.map(
        (line) => JSON.parse(line) as { level: number; msg: string; connection?: string },
      );
      const queue = (msg: string) => lines.filter((line) => line.msg === msg && line.connection === 'queue');
      expect(queue('redis unreachable; reconnecting with backoff').map((line) => line.level)).to.deep.equal([
        40,
      ]);
      expect(queue('redis answers again').map((line) => line.level)).to.deep.equal([30]);
    });
  });

  describe('when Redis hangs (SIGSTOP) so enqueues time out but complete later', () => {
    it('answers each 200 within 1.5 s and, once Redis resumes, holds every event exactly once', async () => {
      const prefix = useQueuePrefix();
      const receiver = await start(prefix, join(dir, 'spool'));
      const bodies = Array.from({ length: 8 }, (_, n) => channelDidCreate(`hang-${n}`));
      redis.process.kill('SIGSTOP');
      try {
        await Promise.all(bodies.map((body) => deliverTimed(receiver, body)));
        expect(receiver.spool.depth()).to.equal(bodies.length);
      } finally {
        redis.process.kill('SIGCONT');
      }
      // The timed-out commands were already on the wire and now run too; the job id and the
      // dedupe mark keep the drainer's adds of the same events from queueing them again.
      await waitFor(() => receiver.spool.depth() === 0, 15_000, 'the spool to drain');
      const processed = await consumeAll(redis.url, prefix, bodies.length);
      expect([...processed].sort()).to.deep.equal(bodies.map((body) => dedupeKey(Buffer.from(body))).sort());
    });
  });

  describe('when Redis hangs for long, under a steady stream of events', () => {
    it('sends nothing more to it while a call is unanswered and drops the connection after a while, so memory holds no pile of calls; once it answers, every event is queued exactly once', async () => {
      const prefix = useQueuePrefix();
      const receiver = await start(prefix, join(dir, 'spool'), { hungRedisReconnectMs: 800 });
      let dropped = 0;
      receiver.queue.client.on('end', () => (dropped += 1));
      // ioredis's queue of commands sent and not answered: each holds its events' text.
      const unanswered = () =>
        (receiver.queue.client as unknown as { commandQueue: { length: number } }).commandQueue.length;
      const bodies = Array.from({ length: 120 }, (_, n) => channelDidCreate(`long-hang-${n}`));
      redis.process.kill('SIGSTOP');
      let most = 0;
      try {
        // 20 waves 100 ms apart: many times the budget (300 ms) and its hold (30 ms).
        for (let wave = 0; wave < 20; wave++) {
          await Promise.all(bodies.slice(wave * 6, wave * 6 + 6).map((body) => deliverTimed(receiver, body)));
          most = Math.max(most, unanswered());
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        expect(receiver.spool.depth()).to.equal(bodies.length);
        expect(most, 'Redis calls left unanswered in memory at once').to.be.at.most(2);
        expect(dropped, 'connections dropped while Redis hung').to.be.at.least(1);
      } finally {
        redis.process.kill('SIGCONT');
      }
      await waitFor(() => receiver.spool.depth() === 0, 15_000, 'the spool to drain');
      const processed = await consumeAll(redis.url, prefix, bodies.length);
      expect([...processed].sort()).to.deep.equal(bodies.map((body) => dedupeKey(Buffer.from(body))).sort());
    });
  });

  // The 1.5 s count from the request's arrival, the body's upload included: a body that took long
  // to arrive left the enqueue its whole budget all the same, and with Redis hung the spooled
  // event was answered after the platform had given the delivery up.
  describe('when a body arrives slowly while Redis hangs', () => {
    it('spools within what is left of the 1.5 s, and the event is queued once Redis answers', async () => {
      const prefix = useQueuePrefix();
      // The longest enqueue budget allowed: a body 0.6 s late left the spool write past the 1.5 s.
      const receiver = await start(prefix, join(dir, 'spool'), { enqueueTimeoutMs: 1_000 });
      const server = await listening(receiver);
      const body = channelDidCreate('slow-upload');
      redis.process.kill('SIGSTOP');
      try {
        const started = performance.now();
        const status = await postLate(server, body, 600);
        const elapsed = performance.now() - started;
        expect(status).to.equal(200);
        expect(elapsed, 'ms from the request to its answer').to.be.below(ackDeadlineMs);
        expect(receiver.spool.depth()).to.equal(1);
      } finally {
        redis.process.kill('SIGCONT');
        server.close();
      }
      await waitFor(() => receiver.spool.depth() === 0, 15_000, 'the spool to drain');
      expect(await consumeAll(redis.url, prefix, 1)).to.deep.equal([dedupeKey(Buffer.from(body))]);
    });
  });

  // The enqueue is not tried when the body came too late to leave it time: it was observed as a
  // failed enqueue all the same, so slow senders read as Redis failing on a dashboard.
  describe('when a body arrives after the enqueue’s share of the 1.5 s, Redis healthy', () => {
    it('spools it untried and counts no enqueue, failed or other', async () => {
      const prefix = useQueuePrefix();
      const receiver = await start(prefix, join(dir, 'spool'));
      const server = await listening(receiver);
      const body = channelDidCreate('late-upload');
      const enqueues = () => enqueuesCounted(receiver, 'outcome=');
      try {
        const before = await enqueues();
        const status = await postLate(server, body, 1_100);
        expect(status).to.equal(200);
        expect(await enqueues()).to.equal(before);
      } finally {
        server.close();
      }
      await waitFor(() => receiver.spool.depth() === 0, 15_000, 'the spool to drain');
      expect(await consumeAll(redis.url, prefix, 1)).to.deep.equal([dedupeKey(Buffer.from(body))]);
    });
  });

  // A late body leaves the enqueue less than its own bounds: an enqueue cut short by that, Redis
  // answering within its bounds, was logged and counted as a failed enqueue (Redis read as failing).
  describe('when a late body leaves the enqueue less time than a healthy Redis takes', () => {
    it('spools the event and logs or counts no failed enqueue; the event is queued once', async () => {
      const prefix = useQueuePrefix();
      const logLines: string[] = [];
      const receiver = await start(prefix, join(dir, 'spool'), { logLines });
      const server = await listening(receiver);
      const body = channelDidCreate('late-and-slow');
      const failed = () => enqueuesCounted(receiver, 'outcome="failed"');
      const pauser = new Redis(redis.url);
      try {
        const before = await failed();
        // The body comes 950 ms after the headers: the enqueue is left about 50 ms of the answer's
        // time. Redis stops answering for 400 ms just before: slow, well within the enqueue's bounds.
        const status = postLate(server, body, 950);
        await new Promise((resolve) => setTimeout(resolve, 900));
        await pauser.call('CLIENT', 'PAUSE', '400');
        expect(await status).to.equal(200);
        expect(await failed()).to.equal(before);
        expect(logLines.join('\n')).not.to.include('enqueue failed');
      } finally {
        pauser.disconnect();
        server.close();
      }
      await waitFor(() => receiver.spool.depth() === 0, 15_000, 'the spool to drain');
      expect(await consumeAll(redis.url, prefix, 1)).to.deep.equal([dedupeKey(Buffer.from(body))]);
    });
  });

  describe('when the receiver restarts with a non-empty spool', () => {
    it('drains the spool of the previous instance into the queue exactly once, also after a crash before the spool was deleted', async () => {
      const prefix = useQueuePrefix();
      const spoolDir = join(dir, 'spool');
      const first = await start(prefix, spoolDir);
      await redis.stop();
      const bodies = Array.from({ length: 12 }, (_, n) => channelDidCreate(`restart-${n}`));
      for (const body of bodies) await deliverTimed(first, body);
      expect(first.spool.depth()).to.equal(bodies.length);
      await first.close();

      // Keep a copy of the spool as it was, to replay a crash after the enqueue but before the delete.
      const snapshot = join(dir, 'snapshot');
      cpSync(spoolDir, snapshot, { recursive: true });

      redis = await startRedis({ dir: join(dir, 'redis'), port, persistent: true });
      const second = await start(prefix, spoolDir);
      await waitFor(() => second.spool.depth() === 0, 15_000, 'the second instance to drain the spool');
      expect(await drained(second)).to.deep.equal({ queued: bodies.length, duplicate: 0 });
      await second.close();

      expect(readdirSync(spoolDir)).to.deep.equal([]);
      cpSync(snapshot, spoolDir, { recursive: true });
      expect(readdirSync(spoolDir)).to.not.deep.equal([]);
      const third = await start(prefix, spoolDir);
      await waitFor(
        () => third.spool.depth() === 0,
        15_000,
        'the third instance to drain the replayed spool',
      );
      expect(readdirSync(third.spool.dir)).to.deep.equal([]);
      // The replayed events were queued by the second instance already: dropped by their marks.
      expect(await drained(third)).to.deep.equal({ queued: 0, duplicate: bodies.length });

      const processed = await consumeAll(redis.url, prefix, bodies.length);
      expect([...processed].sort()).to.deep.equal(bodies.map((body) => dedupeKey(Buffer.from(body))).sort());
    });
  });

  describe('when Redis is down and the disk stalls (an fsync that does not return)', () => {
    const rejected = (receiver: TestReceiver, reason: string) =>
      counterOf(receiver, 'webhook_rejected_total', `reason="${reason}"`);
    /** A valid envelope of about 1 MB (the default WEBHOOK_MAX_BODY_BYTES is 1 MiB). */
    const megabyteBody = (n: number) =>
      JSON.stringify({
        event: 'channel.didCreate',
        data: { channelId: `big-${n}`, pad: 'x'.repeat(1_000_000) },
      });

    it('answers 503 at the platform deadline, refuses at once past 64 MiB waiting, and queues every write that lands', async () => {
      await redis.stop();
      const prefix = useQueuePrefix();
      const logLines: string[] = [];
      const receiver = await start(prefix, join(dir, 'spool'), { noWait: true, logLines });
      const first = channelDidCreate('stalled');
      const big = Array.from({ length: 70 }, (_, n) => megabyteBody(n));
      const disk = await stallDiskCalls(dir, 'sync');
      try {
        const started = performance.now();
        const res = await request(receiver.app).post('/webhooks').set(signedHeaders(first)).send(first);
        const elapsed = performance.now() - started;
        expect(res.status).to.equal(503);
        expect(res.body).to.deep.equal({
          status: 'error',
          code: 503000,
          message: 'the event could not be stored in time; retry later',
        });
        expect(elapsed, 'answered at the deadline (ms)').to.be.within(1_450, 3_000);
        // Its write still waits for the disk; 64 MiB more may wait with it, the rest are refused.
        const statuses = await Promise.all(
          big.map(
            async (body) =>
              (await request(receiver.app).post('/webhooks').set(signedHeaders(body)).send(body)).status,
          ),
        );
        expect(new Set(statuses)).to.deep.equal(new Set([503]));
      } finally {
        disk.restore();
        disk.answer();
      }
      const full = await rejected(receiver, 'spool_full');
      expect(full, 'refused at once: 64 MiB waited').to.be.within(1, 10);
      expect(await rejected(receiver, 'spool_late')).to.equal(1 + big.length - full);
      // One line for the whole stall, not one per refused request.
      expect(logLines.filter((line) => line.includes('could not be stored'))).to.have.length(1);

      // The writes answered late land once the disk answers, and are queued once Redis is back.
      const landed = 1 + big.length - full;
      await waitFor(() => receiver.spool.depth() === landed, 15_000, 'the late writes to be counted');
      redis = await startRedis({ dir: join(dir, 'redis'), port, persistent: true });
      await waitFor(() => receiver.spool.depth() === 0, 30_000, 'the spool to drain');
      const processed = await consumeAll(redis.url, prefix, landed);
      const keys = [first, ...big].map((body) => dedupeKey(Buffer.from(body)));
      expect(processed).to.have.length(landed);
      expect(processed).to.include(keys[0]);
      expect(keys).to.include.members(processed);
      // The platform's retry of the delivery answered 503 is then a duplicate of what landed.
      await deliverTimed(receiver, first);
      expect(await counterOf(receiver, 'webhook_dropped_total', 'reason="duplicate"')).to.equal(1);

      // Redis took events again, which ended the run: the next outage's first refusal is logged.
      await redis.stop();
      const again = await stallDiskCalls(dir, 'sync');
      try {
        const next = channelDidCreate('stalled-again');
        await request(receiver.app).post('/webhooks').set(signedHeaders(next)).send(next).expect(503);
      } finally {
        again.restore();
        again.answer();
      }
      expect(logLines.filter((line) => line.includes('could not be stored'))).to.have.length(2);
    });
  });

  describe('when Redis is down and the spool cannot be written', () => {
    it('responds 503 with the JSON error shape', async () => {
      await redis.stop();
      const spoolDir = join(dir, 'spool');
      const receiver = await start(useQueuePrefix(), spoolDir, { noWait: true });
      rmSync(spoolDir, { recursive: true });
      writeFileSync(spoolDir, 'a file where the spool directory was');
      const body = channelDidCreate('no-spool');
      const res = await request(receiver.app)
        .post('/webhooks')
        .set(signedHeaders(body))
        .send(body)
        .expect(503);
      expect(res.body).to.deep.equal({
        status: 'error',
        code: 503000,
        message: 'the event could not be stored; retry later',
      });
    });
  });
});

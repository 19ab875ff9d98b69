import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Bull from 'bull';
import { freePort, startRedis, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import { BLOCKING_ANSWER_MARGIN_MS, createBullQueue } from '../../../shared/queue/create-bull-queue.ts';
import { startBlackholeProxy, type BlackholeProxy } from '../../support/blackhole-proxy.ts';
import { unhandledRejectionsOf } from '../../support/unhandled-rejections.ts';
import { waitFor } from '../../support/wait-for.ts';

// The worker pauses its queue locally (without waiting for the jobs it holds) when the storage
// stops answering. When Redis is gone too, bull's reconnect of its blocking connection fails and
// ioredis ends that connection for good; bull never makes another.
describe('createBullQueue: the blocking connection after a local pause while Redis is down', function () {
  this.timeout(60_000);
  let dir: string;
  let port: number;
  let redis: LocalServer | undefined;
  let queue: Bull.Queue<{ n: number }> | undefined;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bull-queue-'));
    port = await freePort();
    redis = await startRedis({ dir, port, persistent: true });
  });
  afterEach(async () => {
    await queue?.close(true).catch(() => undefined);
    await redis?.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('is connected again, so jobs queued after the outage are taken once the queue resumes', async () => {
    queue = createBullQueue<{ n: number }>('blocking', { redis: redis!.url, prefix: 'bq' });
    queue.on('error', () => undefined);
    const done: number[] = [];
    void queue.process(async (job) => void done.push(job.data.n));
    await queue.add({ n: 1 });
    await waitFor(() => done.includes(1), 10_000, 'the first job');
    // Drained: the worker now waits on the blocking connection.
    await redis!.stop('SIGKILL');
    await queue.pause(true, true).catch(() => undefined);
    const blocking = (queue as unknown as { bclient: { status: string } }).bclient;
    await waitFor(() => blocking.status !== 'ready', 5_000, 'the blocking connection to go');
    redis = await startRedis({ dir, port, persistent: true });
    await queue.resume(true);
    await queue.add({ n: 2 });
    await waitFor(() => done.includes(2), 20_000, 'the job queued after the outage').catch(() => undefined);
    expect(done).to.deep.equal([1, 2]);
  });
});

// A primary that dies without a reset, or fails over behind one address, leaves the blocking
// connection's BRPOPLPUSH waiting on a socket that will never answer: nothing is sent on it while
// it waits, so no retransmission fails it, and the OS's keep-alive first probes after two hours.
// The worker took no job for that long, with /readyz green.
/** The command connection's wait, shorter than its minute by default (COMMAND_ANSWER_MS). */
const COMMAND_WAIT_MS = 5_000;

describe('createBullQueue: the blocking connection to a server gone silent', function () {
  this.timeout(60_000);
  let dir: string;
  let redis: LocalServer | undefined;
  let proxy: BlackholeProxy | undefined;
  let queue: Bull.Queue<{ n: number }> | undefined;
  let producer: Bull.Queue<{ n: number }> | undefined;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bull-queue-'));
    redis = await startRedis({ dir, port: await freePort() });
    proxy = await startBlackholeProxy(redis.port);
  });
  after(async () => {
    await queue?.close(true).catch(() => undefined);
    await producer?.close(true).catch(() => undefined);
    await proxy?.close();
    await redis?.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives up on it once an answer is overdue, connects again and takes the jobs queued meanwhile', async () => {
    // A drain delay of 1 s: a live server answers each blocking read within about a second. The
    // new blocking connection may take the job before the command connection has given up on the
    // silent server too: bull's stalled check (every 2 s here, 30 s by default) puts it back.
    queue = createBullQueue<{ n: number }>(
      'silent',
      { redis: `redis://127.0.0.1:${proxy!.port}`, prefix: 'bq' },
      { drainDelay: 1, stalledInterval: 2_000 },
      COMMAND_WAIT_MS,
    );
    queue.on('error', () => undefined);
    producer = createBullQueue<{ n: number }>('silent', { redis: redis!.url, prefix: 'bq' });
    const done: number[] = [];
    void queue.process(async (job) => void done.push(job.data.n));
    await producer.add({ n: 1 });
    await waitFor(() => done.includes(1), 10_000, 'the first job');
    proxy!.blackhole();
    const cut = Date.now();
    await producer.add({ n: 2 });
    await waitFor(() => done.includes(2), 40_000, 'the job queued after the cut');
    expect(Date.now() - cut).to.be.below(COMMAND_WAIT_MS + BLOCKING_ANSWER_MARGIN_MS + 10_000);
  });
});

/**
 * A Redis of its own for each test (stopped after it; `stop()` stops it earlier), and every queue
 * handed to `closeAfter` closed after the test, before that Redis stops.
 */
function useFreshRedis() {
  let dir = '';
  let redis: LocalServer | undefined;
  const queues: Bull.Queue<{ n: number }>[] = [];
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bull-queue-'));
    redis = await startRedis({ dir });
  });
  afterEach(async () => {
    for (const queue of queues.splice(0)) await queue.close().catch(() => undefined);
    await redis?.stop('SIGKILL');
    redis = undefined;
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    url: () => redis!.url,
    stop: async () => {
      await redis?.stop('SIGKILL');
      redis = undefined;
    },
    closeAfter: <Q extends Bull.Queue<{ n: number }>>(queue: Q): Q => (queues.push(queue), queue),
  };
}

// bull's disconnect() closes only the connections bull made itself, and this factory makes them
// all: a close that gave up waiting for a hung job (the example consumer's deadline, the worker's
// shutdown at its storage gate) called it and closed nothing. The blocking read still waiting on
// the server took the next job queued into the hung process, and the command connection kept
// renewing the locks of both, so no other worker ever took them while that process lived.
describe('createBullQueue: disconnect() while a job hangs', function () {
  this.timeout(30_000);
  const redis = useFreshRedis();

  it('drops every connection at once: a job queued after it waits, and none connects again', async () => {
    const queue = createBullQueue<{ n: number }>('hung', { redis: redis.url(), prefix: 'dq' });
    queue.on('error', () => undefined);
    const taken: number[] = [];
    void queue.process(4, (job) => {
      taken.push(job.data.n);
      return new Promise<void>(() => undefined);
    });
    await queue.add({ n: 1 });
    await waitFor(() => taken.length === 1, 10_000, 'the first job');
    // bull's close, waiting for the job, connects its blocking connection again; refused after the
    // drop, that connect must not fail as a rejection nobody handles (it would end the process).
    const unhandled = await unhandledRejectionsOf(async () => {
      void queue.close().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 100));
      await queue.disconnect();
    }, 1_000);
    expect(unhandled.map(String)).to.deep.equal([]);

    const admin = redis.closeAfter(
      createBullQueue<{ n: number }>('hung', { redis: redis.url(), prefix: 'dq' }),
    );
    const second = await admin.add({ n: 2 });
    // Longer than bull's own QUIT of its blocking connection (500 ms) and its reconnect after it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(taken).to.deep.equal([1]);
    expect(await second.getState()).to.equal('waiting');
    const names = (await admin.client.client('LIST')) as string;
    // bull names a worker's connections after its queue; the admin queue, which only adds, has none.
    const named = names.split('\n').filter((line) => line.includes(' name=dq:'));
    expect(named, names).to.deep.equal([]);
  });
});

// A shutdown with Redis gone (a stack stopping it first) while a job runs: bull's close connects its
// blocking connection again at once and handles that connect's failure only once the job settles.
describe('createBullQueue: a close while Redis is gone and a job runs', function () {
  this.timeout(30_000);
  const redis = useFreshRedis();

  it('leaves no rejection unhandled, and finishes once the job does', async () => {
    const queue = createBullQueue<{ n: number }>('gone', { redis: redis.url(), prefix: 'gq' });
    queue.on('error', () => undefined);
    let finish: () => void = () => undefined;
    let started = false;
    void queue.process(2, () => {
      started = true;
      return new Promise<void>((resolve) => (finish = resolve));
    });
    await queue.add({ n: 1 });
    await waitFor(() => started, 10_000, 'the job');
    await redis.stop();
    let closed = false;
    const unhandled = await unhandledRejectionsOf(async () => {
      void queue.close().finally(() => (closed = true));
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      finish();
    }, 1_500);
    expect(unhandled.map(String)).to.deep.equal([]);
    await waitFor(() => closed, 10_000, 'the close');
  });
});

// bull names a worker's blocking connection with CLIENT SETNAME when a handler is set, and leaves
// that promise unhandled: a Redis user without CLIENT (Redis 6.2's -@dangerous, or -client on 7,
// as managed services grant) made every worker start end its process.
describe('createBullQueue: a worker whose Redis user may not run CLIENT', function () {
  this.timeout(30_000);
  const redis = useFreshRedis();

  it('takes jobs all the same, leaving no rejection unhandled, and says why it has no name', async () => {
    const admin = createBullQueue<{ n: number }>('acl', { redis: redis.url(), prefix: 'aq' });
    await admin.client.call('ACL', 'SETUSER', 'worker', 'on', '>worker-pw', '~*', '&*', '+@all', '-client');
    await admin.close();
    const url = new URL(redis.url());
    url.username = 'worker';
    url.password = 'worker-pw';
    const queue = redis.closeAfter(
      createBullQueue<{ n: number }>('acl', { redis: url.toString(), prefix: 'aq' }),
    );
    const errors: string[] = [];
    queue.on('error', (error: Error) => errors.push(error.message));
    const done: number[] = [];
    const unhandled = await unhandledRejectionsOf(async () => {
      void queue.process(async (job) => void done.push(job.data.n));
      await queue.add({ n: 1 });
      await waitFor(() => done.length === 1, 10_000, 'the job');
    }, 500);
    expect(unhandled.map(String)).to.deep.equal([]);
    expect(done).to.deep.equal([1]);
    expect(errors.join('\n')).to.match(/NOPERM/);
  });
});

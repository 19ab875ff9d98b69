import type Bull from 'bull';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { ClusterNode } from '../../../scripts/lib/redis-cluster.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createWebhookQueue, type WebhookJobData } from '../../../shared/queue/webhook-queue.ts';
import type { RedisClient } from '../../../shared/redis/create-redis.ts';
import { withTimeout } from '../../../shared/time/with-timeout.ts';
import { publishAllBans, publishBans } from '../../../tray-service/bans/publish-bans.ts';
import { startBanCache, type BanCache } from '../../../tray-service/http/auth/ban-cache.ts';
import { createRateLimiter } from '../../../tray-service/http/rate-limit/create-rate-limiter.ts';
import { useRedisCluster } from '../../support/use-redis-cluster.ts';

const silent = createLogger({ name: 'test', level: 'silent' });
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** How long each consumer may take to reach the promoted master once the failover is done. */
const recoveryBoundMs = 15_000;

const job = (key: string): WebhookJobData => ({
  dedupeKey: key,
  webhook: 'default',
  receivedAt: '2026-11-21T00:00:00.000Z',
  event: 'post.didCreate',
  data: { n: key },
});

/** Ms until `probe` returns true, polled every 50 ms; throws after `timeoutMs`. */
async function msUntil(what: string, probe: () => boolean | Promise<boolean>, timeoutMs: number) {
  const started = performance.now();
  while (!(await probe())) {
    if (performance.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(50);
  }
  return Math.round(performance.now() - started);
}

/**
 * The tray service's long-lived connections when the master they use hangs instead of dying (no
 * TCP reset, so no connection error ever reaches the client): nothing tells the client the slot
 * moved unless it re-reads the slot map by itself.
 */
describe('createRedis on a Redis Cluster whose master hangs (SIGSTOP) and fails over', function () {
  this.timeout(90_000);
  const redisCluster = useRedisCluster('cluster-hang');
  const { connect } = redisCluster;
  let hung: ClusterNode | undefined;
  const queues: Bull.Queue[] = [];
  let bans: BanCache | undefined;
  redisCluster.atTeardown(async () => {
    hung?.resume();
    bans?.stop();
    for (const queue of queues.splice(0)) await queue.close().catch(() => undefined);
  });

  it('the worker, the rate limiter, the ban cache and a subscription move to the promoted replica', async () => {
    const { cluster, target } = redisCluster;
    // One hash tag for the queue, the rate limit's key and the ban keys: one master holds them all.
    const tag = 'hang';
    const prefix = `{${tag}}`;
    const rateLimitPrefix = `${prefix}rl`;
    const channel = `${prefix}:changes`;
    const master = await cluster.masterOf(`${prefix}:x`);

    // The worker, parked in its blocking read on that master once it has run a first job.
    const worker = createWebhookQueue({ redis: target, prefix });
    queues.push(worker);
    worker.on('error', () => undefined);
    const processed = new Set<string>();
    void worker.process(async (processing) => {
      processed.add(String(processing.id));
    });
    const producer = () => {
      const queue = createWebhookQueue({ redis: target, prefix });
      queues.push(queue);
      queue.on('error', () => undefined);
      return queue;
    };
    await producer().add(job('before'), { jobId: 'before' });
    await msUntil('the first job', () => processed.has('before'), 10_000);

    // The API's rate limiter and ban cache, on the tray's shared command connection.
    const redis = connect();
    const limiter = createRateLimiter({ redis, points: 100, windowMs: 60_000, keyPrefix: rateLimitPrefix });
    await limiter.consume('u-1');
    // The whole stored set first (none), as a worker publishes it when it starts.
    await publishAllBans(redis, tag, []);
    bans = await startBanCache(redis, { prefix: tag, refreshMs: 200, logger: silent });

    // The live streams' subscriber, on the hanging master: ioredis picks its node at random.
    let subscriber: RedisClient | undefined;
    const admin = new Redis({ host: '127.0.0.1', port: master.port });
    try {
      for (let attempt = 0; attempt < 100 && !subscriber; attempt += 1) {
        const candidate = connect();
        await candidate.subscribe(channel);
        const here = (await admin.call('PUBSUB', 'NUMSUB', channel)) as [string, number];
        if (here[1] > 0) subscriber = candidate;
        else candidate.disconnect();
      }
    } finally {
      admin.disconnect();
    }
    if (!subscriber) throw new Error('no subscriber landed on the master to hang');
    let received = 0;
    subscriber.on('message', () => {
      received += 1;
    });

    hung = master;
    master.pause();
    const hungAt = performance.now();
    await cluster.waitUntilOk(30_000);
    const failoverMs = Math.round(performance.now() - hungAt);
    expect((await cluster.masterOf(`${prefix}:x`)).address).to.not.equal(master.address);

    // Each consumer's time from here; a fresh connection reads the new slot map, as a receiver's
    // or worker's would.
    const fresh = connect();
    const recovery = await Promise.allSettled([
      (async () => {
        await withTimeout(producer().add(job('after'), { jobId: 'after' }), recoveryBoundMs);
        return msUntil(
          'the worker runs a job queued after the failover',
          () => processed.has('after'),
          recoveryBoundMs,
        );
      })(),
      msUntil(
        'a rate-limit consume answers',
        async () => {
          const answer = await withTimeout(limiter.consume('u-1'), recoveryBoundMs).catch(() => undefined);
          // Counted in Redis (the one before the hang made 1), not by the in-process fallback.
          return answer !== undefined && Number(await fresh.get(`${rateLimitPrefix}:u-1`)) >= 2;
        },
        recoveryBoundMs,
      ),
      (async () => {
        // As the worker does: a promoted replica that had not received the version yet (written just
        // before the hang) has lost the set, and only the whole stored set creates it again.
        const ban = { userId: 'u-ban', banned: true, at: Date.now() };
        const { setLost } = await withTimeout(publishBans(fresh, tag, [ban]), recoveryBoundMs);
        if (setLost) await withTimeout(publishAllBans(fresh, tag, [ban]), recoveryBoundMs);
        return msUntil(
          'the ban cache sees a new ban',
          () => bans?.isBanned('u-ban') === true,
          recoveryBoundMs,
        );
      })(),
      msUntil(
        'the subscription receives a publish',
        async () => {
          await fresh.publish(channel, 'change');
          return received > 0;
        },
        recoveryBoundMs,
      ),
    ]);
    const names = ['worker', 'rate limit', 'ban cache', 'subscription'];
    const outcomes = recovery.map((outcome, n) =>
      outcome.status === 'fulfilled' ? `${names[n]} ${outcome.value} ms` : (outcome.reason as Error).message,
    );
    console.log(`      figures: failover ${failoverMs} ms; after it: ${outcomes.join('; ')}`);
    expect(
      recovery
        .filter((outcome) => outcome.status === 'rejected')
        .map((outcome) => (outcome.reason as Error).message),
    ).to.deep.equal([]);
  });
});

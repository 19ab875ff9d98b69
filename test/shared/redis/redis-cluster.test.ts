import type Bull from 'bull';
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Cluster, Redis } from 'ioredis';
import { planFailover } from '../../../scripts/lib/redis-cluster.ts';
import { createReceiverQueue, type ReceiverQueue } from '../../../receiver/store/create-receiver-queue.ts';
import {
  dedupeMarkKey,
  enqueueMany,
  NotReplicatedError,
  ReplicaFence,
  type EnqueueTarget,
} from '../../../receiver/store/enqueue-once.ts';
import {
  createWebhookQueue,
  encodeWebhookJob,
  WEBHOOK_QUEUE_NAME,
  webhookJobOptions,
  type WebhookJobData,
} from '../../../shared/queue/webhook-queue.ts';
import {
  createRedis,
  isSubscriberConnected,
  onSubscriberReplaced,
  subscriberConnection,
  type RedisClient,
} from '../../../shared/redis/create-redis.ts';
import { watchSubscriber } from '../../../shared/redis/watch-subscriber.ts';
import { startBlackholeProxy } from '../../support/blackhole-proxy.ts';
import { warnVolatileRedis } from '../../../receiver/store/warn-volatile-redis.ts';
import { recordingLogger } from '../../support/recording-logger.ts';
import { refuseEvictingRedis } from '../../../shared/redis/refuse-evicting-redis.ts';
import { createRateLimiter } from '../../../tray-service/http/rate-limit/create-rate-limiter.ts';
import { cleanEnv, runScript, startScript } from '../../support/run-script.ts';
import { runHungConsumerProgram } from '../../support/hung-consumer-program.ts';
import { uniqueName } from '../../support/suite-resources.ts';
import { useRedisCluster } from '../../support/use-redis-cluster.ts';
import { waitFor } from '../../support/wait-for.ts';

const job = (key: string): WebhookJobData => ({
  dedupeKey: key,
  webhook: 'default',
  receivedAt: '2026-11-21T00:00:00.000Z',
  event: 'post.didCreate',
  data: { n: key },
});

/**
 * The replica's confirmation in tests that are not about its timing: generous, because on a busy
 * CI machine a replica may take longer than the receiver's default 100 ms to acknowledge.
 */
const patientWaitMs = 2_000;

/** Resolves with the first value `probe` returns that is not undefined (bounded). */
async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Resolves once `client` is connected (a cluster: once it has the slot map). */
async function ready(client: RedisClient): Promise<void> {
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
}

/** The receiver's enqueue target on `queue`, fenced as on a cluster. */
const fencedTarget = (queue: ReceiverQueue, prefix: string, fence: ReplicaFence): EnqueueTarget => ({
  queue: queue.queue,
  redis: queue.client,
  markPrefix: prefix,
  dedupeSeconds: 60,
  fence,
});

describe('on a Redis Cluster (3 masters, 3 replicas on loopback)', function () {
  this.timeout(60_000);
  const local = useRedisCluster('redis-cluster');
  const { connect } = local;
  const queues: Bull.Queue[] = [];
  local.atTeardown(async () => {
    for (const queue of queues.splice(0)) await queue.close().catch(() => undefined);
  });
  /** A queue prefix with a hash tag of its own, so each test uses a fresh slot's keys. */
  const taggedPrefix = () => `{${uniqueName('c')}}`;
  /** `read` on a connection of its own to the replica of the prefix's master (READONLY). */
  const onReplica = async <T>(prefix: string, read: (direct: Redis) => Promise<T>): Promise<T> => {
    const replica = await local.cluster.replicaOf(await local.cluster.masterOf(`${prefix}:x`));
    const direct = new Redis({ host: '127.0.0.1', port: replica.port, lazyConnect: true });
    try {
      await direct.connect();
      await direct.call('READONLY');
      return await read(direct);
    } finally {
      direct.disconnect();
    }
  };

  describe('the test topology', () => {
    it('has 3 masters serving every slot, each with one replica', async () => {
      const roles = await local.cluster.roles();
      const masters = roles.filter((node) => node.role === 'master');
      expect(masters).to.have.lengthOf(3);
      for (const master of masters) {
        expect(roles.filter((node) => node.masterAddress === master.address)).to.have.lengthOf(1);
      }
      const info = String(await connect().call('CLUSTER', 'INFO'));
      expect(info).to.include('cluster_state:ok').and.to.include('cluster_slots_ok:16384');
    });
  });

  describe("the receiver's enqueue script (dedupe marks and jobs in one call)", () => {
    let receiverQueue: ReceiverQueue;
    let enqueue: EnqueueTarget;
    const prefix = taggedPrefix();
    before(async () => {
      receiverQueue = createReceiverQueue(local.target, prefix);
      receiverQueue.client.on('error', () => undefined);
      await ready(receiverQueue.client);
      enqueue = fencedTarget(receiverQueue, prefix, new ReplicaFence(patientWaitMs));
    });
    after(() => receiverQueue.close());

    it('keeps each mark in its job slot, so a batch is one call on one master', async () => {
      const marks = ['d1', 'd2', 'd3'].map((key) => dedupeMarkKey(prefix, key));
      const jobKey = `${prefix}:${WEBHOOK_QUEUE_NAME}:d1`;
      const slots = await Promise.all(
        [...marks, jobKey, `${prefix}:${WEBHOOK_QUEUE_NAME}:wait`].map(
          async (key) => (await local.cluster.masterOf(key)).address,
        ),
      );
      expect(new Set(slots).size).to.equal(1);
      const outcomes = await enqueueMany(
        enqueue,
        ['d1', 'd2', 'd1', 'd3'].map((k) => encodeWebhookJob(job(k))),
      );
      expect(outcomes).to.deep.equal(['queued', 'queued', 'duplicate', 'queued']);
      expect(await receiverQueue.queue.getWaitingCount()).to.equal(3);
    });

    it('waits for the replica (WAIT in the same pipeline): the replica holds the job when the call returns', async () => {
      const [outcome] = await enqueueMany(enqueue, [encodeWebhookJob(job('r1'))]);
      expect(outcome).to.equal('queued');
      expect(enqueue.fence?.replicas).to.equal(1);
      expect(
        await onReplica(prefix, (direct) =>
          direct.exists(`${prefix}:${WEBHOOK_QUEUE_NAME}:r1`, dedupeMarkKey(prefix, 'r1')),
        ),
      ).to.equal(2);
    });

    // WAIT waits for the connection's own last write. A duplicate writes nothing, so on another
    // connection (a restarted receiver, the spool's replay) it used to pass at once, and the
    // spooled copy of an event its master held unreplicated was deleted as a duplicate: lost
    // if that master then failed.
    it('answers a duplicate only once a replica holds the first write, also on another connection', async () => {
      const briefWaitMs = 300;
      const replica = await local.cluster.replicaOf(await local.cluster.masterOf(`${prefix}:x`));
      const other = createReceiverQueue(local.target, prefix);
      other.client.on('error', () => undefined);
      try {
        await ready(other.client);
        const first = fencedTarget(receiverQueue, prefix, new ReplicaFence(briefWaitMs));
        const second = fencedTarget(other, prefix, new ReplicaFence(briefWaitMs));
        replica.pause();
        try {
          await expect(enqueueMany(first, [encodeWebhookJob(job('u1'))])).to.be.rejectedWith(
            NotReplicatedError,
          );
          await expect(enqueueMany(second, [encodeWebhookJob(job('u1'))])).to.be.rejectedWith(
            NotReplicatedError,
          );
        } finally {
          replica.resume();
        }
        const patient = fencedTarget(other, prefix, new ReplicaFence(patientWaitMs));
        expect(await enqueueMany(patient, [encodeWebhookJob(job('u1'))])).to.deep.equal(['duplicate']);
        expect(
          await onReplica(prefix, (direct) => direct.exists(`${prefix}:${WEBHOOK_QUEUE_NAME}:u1`)),
        ).to.equal(1);
      } finally {
        await other.close();
      }
    });

    it('fails with CROSSSLOT when the prefix has no hash tag (why start-up refuses one)', async () => {
      const untagged = uniqueName('plain');
      const plainQueue = createReceiverQueue(local.target, untagged);
      plainQueue.client.on('error', () => undefined);
      try {
        await ready(plainQueue.client);
        await expect(
          enqueueMany(
            { queue: plainQueue.queue, redis: plainQueue.client, markPrefix: untagged, dedupeSeconds: 60 },
            [encodeWebhookJob(job('x1')), encodeWebhookJob(job('x2'))],
          ),
        ).to.be.rejectedWith(/CROSSSLOT/);
      } finally {
        await plainQueue.close();
      }
    });
  });

  describe("bull's own scripts with a hash-tagged prefix", () => {
    it('adds, fails, backs off, retries, completes, replays a failed job, cleans, pauses and removes', async () => {
      const prefix = taggedPrefix();
      const queue = createWebhookQueue({ redis: local.target, prefix });
      queues.push(queue);
      queue.on('error', () => undefined);
      const attempts = new Map<string, number>();
      void queue.process(async (processed) => {
        const id = String(processed.id);
        attempts.set(id, (attempts.get(id) ?? 0) + 1);
        if (id === 'flaky' && processed.attemptsMade === 0) throw new Error('first attempt fails');
        if (id === 'doomed' && attempts.get(id) === 1) throw new Error('always fails');
      });
      // addJob, moveToActive, moveToFinished (completed).
      await queue.add(job('ok'), { ...webhookJobOptions, jobId: 'ok' });
      // retryJob into the delayed set with the capped exponential backoff, then updateDelaySet.
      await queue.add(job('flaky'), { ...webhookJobOptions, jobId: 'flaky' });
      // One attempt only: lands in the failed set (moveToFinished, failed).
      await queue.add(job('doomed'), { attempts: 1, jobId: 'doomed' });
      await eventually(async () => ((await queue.getCompletedCount()) >= 2 ? true : undefined));
      await eventually(async () => ((await queue.getFailedCount()) === 1 ? true : undefined));
      expect(attempts.get('flaky')).to.equal(2);
      // reprocessJob (scripts/replay's "failed" command).
      const doomed = await queue.getJob('doomed');
      await doomed?.retry();
      await eventually(async () => ((await queue.getCompletedCount()) === 3 ? true : undefined));
      expect(await queue.getJobCounts()).to.deep.include({ waiting: 0, active: 0, delayed: 0, failed: 0 });
      // pause/resume, removeJob, cleanJobsInSet.
      await queue.pause();
      await queue.add(job('held'), { jobId: 'held' });
      expect(await queue.getJobCounts()).to.deep.include({ paused: 1 });
      await (await queue.getJob('held'))?.remove();
      await queue.resume();
      const cleaned = await queue.clean(0, 'completed');
      expect(cleaned.map(String).sort()).to.deep.equal(['doomed', 'flaky', 'ok']);
    });

    it('recovers a stalled job (moveStalledJobsToWait) after its worker vanished', async () => {
      const prefix = taggedPrefix();
      const producer = createWebhookQueue({ redis: local.target, prefix });
      queues.push(producer);
      await producer.add(job('stalls'), { ...webhookJobOptions, jobId: 'stalls' });
      // Take the job as a worker would, then "die": its lock expires and nobody renews it.
      const taken = (await producer.getNextJob()) as Bull.Job | undefined;
      expect(taken?.id).to.equal('stalls');
      await connect().del(`${prefix}:${WEBHOOK_QUEUE_NAME}:stalls:lock`);
      const recovering = producer as unknown as { moveUnlockedJobsToWait(): Promise<unknown> };
      // The first pass marks the active job as suspect; the second moves it back.
      await recovering.moveUnlockedJobsToWait();
      // bull runs the check at most once per stalled interval, remembered in this key.
      await connect().del(`${prefix}:${WEBHOOK_QUEUE_NAME}:stalled-check`);
      await recovering.moveUnlockedJobsToWait();
      expect(await producer.getJobCounts()).to.deep.include({ waiting: 1, active: 0 });
    });
  });

  describe('the rate limiter', () => {
    it('counts one user across two connections (one key, one slot, a MULTI on it)', async () => {
      const keyPrefix = uniqueName('rl');
      const [first, second] = [connect(), connect()];
      await Promise.all([ready(first), ready(second)]);
      // Without Redis the limiter falls back to a counter per process, which would not see both.
      const a = createRateLimiter({ redis: first, points: 3, windowMs: 10_000, keyPrefix });
      const b = createRateLimiter({ redis: second, points: 3, windowMs: 10_000, keyPrefix });
      await a.consume('user-1');
      await b.consume('user-1');
      await a.consume('user-1');
      await expect(b.consume('user-1')).to.be.rejected;
      const state = await a.get('user-1');
      expect(state?.consumedPoints).to.equal(4);
      await a.delete('user-1');
      expect(await a.get('user-1')).to.equal(null);
    });
  });

  describe('the eviction check', () => {
    it('reads every master and names the one that may evict', async () => {
      const masters = (await local.cluster.roles()).filter((node) => node.role === 'master');
      const evicting = masters[2]!.address;
      const port = Number(evicting.split(':')[1]);
      const admin = new Redis({ host: '127.0.0.1', port });
      try {
        await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
        const messages: string[] = [];
        await refuseEvictingRedis(connect(), { onRefused: (message) => messages.push(message) });
        expect(messages).to.have.lengthOf(1);
        expect(messages[0]).to.include('"allkeys-lru"').and.to.include(`(master ${evicting})`);
      } finally {
        await admin.config('SET', 'maxmemory-policy', 'noeviction');
        admin.disconnect();
      }
    });

    // A master restarted in place keeps its address, so the slot map does not change; its
    // connection ends, though, and the node is checked again once the client reconnects to it.
    it('checks a master again once its connection was lost, as after a restart in place', async () => {
      const masters = (await local.cluster.roles()).filter((node) => node.role === 'master');
      const port = Number(masters[1]!.address.split(':')[1]);
      const admin = new Redis({ host: '127.0.0.1', port });
      const messages: string[] = [];
      try {
        const client = connect();
        await refuseEvictingRedis(client, { onRefused: (message) => messages.push(message) });
        expect(messages).to.deep.equal([]);
        await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
        await admin.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
        // The next command or slot-map refresh connects to the node again.
        await client.set(`{${masters[1]!.address}}probe`, '1').catch(() => undefined);
        for (let n = 0; n < 100 && messages.length === 0; n += 1)
          await new Promise((resolve) => setTimeout(resolve, 100));
        expect(messages).to.have.lengthOf(1);
        expect(messages[0]).to.include('"allkeys-lru"').and.to.include(`(master ${masters[1]!.address})`);
      } finally {
        await admin.config('SET', 'maxmemory-policy', 'noeviction');
        admin.disconnect();
      }
    });

    it('accepts a cluster whose masters all use noeviction', async () => {
      const messages: string[] = [];
      await refuseEvictingRedis(connect(), { onRefused: (message) => messages.push(message) });
      expect(messages).to.deep.equal([]);
    });
  });

  /**
   * A client signed in as a user that every node refuses `command` (ACL), as on managed clusters
   * that refuse CONFIG or INFO, and the number of masters.
   */
  async function connectWithout(command: string): Promise<{ client: RedisClient; masters: number }> {
    const nodes = await local.cluster.roles();
    const user = `no-${command}`;
    for (const node of nodes) {
      const admin = new Redis({ host: '127.0.0.1', port: Number(node.address.split(':')[1]) });
      try {
        await admin.call('ACL', 'SETUSER', user, 'on', `>${user}-pw`, '~*', '&*', '+@all', `-${command}`);
      } finally {
        admin.disconnect();
      }
    }
    const client = createRedis({ ...local.target, auth: { username: user, password: `${user}-pw` } });
    client.on('error', () => undefined);
    return { client, masters: nodes.filter((node) => node.role === 'master').length };
  }

  /** Waits past two slot-map refreshes (every 2 s), when a master refused would be asked again. */
  const pastTwoRefreshes = () => new Promise((resolve) => setTimeout(resolve, 5_000));

  describe("the receiver's persistence warning", () => {
    // Managed clusters often refuse CONFIG; the warning says so once per master, not at every
    // slot-map refresh for as long as the receiver runs.
    it('says once per master that it could not read the settings when CONFIG is refused', async () => {
      const { client, masters } = await connectWithout('config');
      const { messages, logger } = recordingLogger();
      try {
        await warnVolatileRedis(client, { logger });
        await pastTwoRefreshes();
        expect(messages.filter((message) => message.includes('could not read'))).to.have.lengthOf(masters);
      } finally {
        client.disconnect();
      }
    });
  });

  describe("the receiver's enqueue when ROLE is refused (an ACL without @dangerous)", () => {
    it('still queues, waiting for the replica, and says once that ROLE is refused', async () => {
      const { client } = await connectWithout('role');
      const prefix = taggedPrefix();
      // The user's own queue connection, as the receiver's would be.
      const receiverQueue = createReceiverQueue(
        { ...local.target, auth: { username: 'no-role', password: 'no-role-pw' } },
        prefix,
      );
      receiverQueue.client.on('error', () => undefined);
      const told: string[] = [];
      try {
        await ready(receiverQueue.client);
        const enqueue = fencedTarget(
          receiverQueue,
          prefix,
          new ReplicaFence(patientWaitMs, (message) => told.push(message)),
        );
        expect(await enqueueMany(enqueue, [encodeWebhookJob(job('n1'))])).to.deep.equal(['queued']);
        expect(
          await enqueueMany(enqueue, [encodeWebhookJob(job('n1')), encodeWebhookJob(job('n2'))]),
        ).to.deep.equal(['duplicate', 'queued']);
        expect(told).to.have.lengthOf(1);
        expect(told[0]).to.match(/^NOPERM/);
        expect(
          await onReplica(prefix, (direct) => direct.exists(`${prefix}:${WEBHOOK_QUEUE_NAME}:n2`)),
        ).to.equal(1);
      } finally {
        await receiverQueue.close();
        client.disconnect();
      }
    });
  });

  describe('the eviction check when INFO is refused', () => {
    it('says once per master that it could not read the policy, and refuses nothing', async () => {
      const { client, masters } = await connectWithout('info');
      const { messages, logger } = recordingLogger();
      const evicting: string[] = [];
      try {
        await refuseEvictingRedis(client, { logger, onRefused: (message) => evicting.push(message) });
        await pastTwoRefreshes();
        expect(messages.filter((message) => message.includes('could not read'))).to.have.lengthOf(masters);
        expect(evicting).to.deep.equal([]);
      } finally {
        client.disconnect();
      }
    });
  });

  describe('scripts/replay.ts with REDIS_CLUSTER_NODES', () => {
    it('moves a failed job back to waiting on the cluster', async () => {
      const prefix = taggedPrefix();
      const worker = createWebhookQueue({ redis: local.target, prefix });
      queues.push(worker);
      const failed = new Promise((resolve) => worker.once('failed', resolve));
      void worker.process(async () => {
        throw new Error('MongoDB was down');
      });
      await worker.add(job('dead'), { jobId: 'dead', attempts: 1 });
      await failed;
      await worker.close();
      const result = await runScript(
        'scripts/replay.ts',
        ['failed'],
        cleanEnv({ REDIS_CLUSTER_NODES: local.cluster.seeds, QUEUE_PREFIX: prefix }),
        30_000,
      );
      // Only its progress lines (stderr is not a terminal here): no warning, no error.
      expect(result.stderr).to.match(/^(retrying: .*\n)*$/);
      expect(result.stdout).to.include('1 failed jobs moved back');
      const queue = createWebhookQueue({ redis: local.target, prefix });
      queues.push(queue);
      expect(await queue.getJobCounts()).to.deep.include({ waiting: 1, failed: 0 });
    });
  });

  // The spool's replay counted an event queued once its master had it, as a receiver without the
  // replica fence did: the operator then deleted the copied spool, and a failover right after the
  // write lost what no replica held.
  describe('scripts/replay.ts spool with REDIS_CLUSTER_NODES', () => {
    it('counts an event queued only once a replica holds it, and fails naming the replica otherwise', async () => {
      const prefix = taggedPrefix();
      const dir = mkdtempSync(join(tmpdir(), 'replay-cluster-spool-'));
      const file = join(dir, 'segment-000000000001.ndjson');
      const key = createHash('sha256').update(prefix).digest('hex');
      writeFileSync(file, `${JSON.stringify(job(key))}\n`);
      const env = cleanEnv({ REDIS_CLUSTER_NODES: local.cluster.seeds, QUEUE_PREFIX: prefix });
      const replica = await local.cluster.replicaOf(await local.cluster.masterOf(`${prefix}:x`));
      try {
        // A replica that is connected but does not answer: the master still counts it (ROLE).
        replica.process.kill('SIGSTOP');
        // No worker reads this queue here: the replay is told to queue anyway.
        const stalled = await runScript('scripts/replay.ts', ['spool', '--no-workers-ok', file], env, 30_000);
        expect(stalled.code, stalled.stderr).to.equal(1);
        expect(stalled.stderr).to.match(/no replica confirmed the enqueue within 2000 ms/);
        expect(stalled.stdout).to.not.include('1 queued');
        replica.process.kill('SIGCONT');
        await local.cluster.waitUntilOk();
        const again = await runScript('scripts/replay.ts', ['spool', '--no-workers-ok', file], env, 30_000);
        expect(again.code, again.stderr).to.equal(0);
        expect(again.stdout).to.include('0 queued, 1 already queued, 0 invalid');
      } finally {
        replica.process.kill('SIGCONT');
        rmSync(dir, { recursive: true, force: true });
      }
      await local.cluster.waitUntilOk();
    });
  });

  // A customer running only the receiver on a cluster, with the example consumer behind it: the
  // consumer read REDIS_URL alone and retried a node that was never there, processing nothing.
  describe('examples/consumer/main.ts with REDIS_CLUSTER_NODES', () => {
    it('takes the receiver’s jobs from the cluster', async () => {
      const prefix = taggedPrefix();
      const queue = createWebhookQueue({ redis: local.target, prefix });
      queues.push(queue);
      const { child, output } = await startScript(
        'examples/consumer/main.ts',
        cleanEnv({ REDIS_CLUSTER_NODES: local.cluster.seeds, QUEUE_PREFIX: prefix }),
        /consuming webhook-events/,
      );
      try {
        await queue.add(job('on-the-cluster'), { jobId: 'on-the-cluster' });
        await waitFor(() => output().includes('on-the-cluster (attempt 1)'), 15_000, 'the line');
      } finally {
        child.kill('SIGTERM');
      }
    });

    // Each node's connection keeps ioredis's socket timeout of a pending command after it closed:
    // a program whose consumer's close gave up on a hung job stayed alive up to 15 s more.
    it('lets a program end by itself after a close that timed out', async () => {
      const prefix = taggedPrefix();
      const queue = createWebhookQueue({ redis: local.target, prefix });
      queues.push(queue);
      const started = performance.now();
      const running = runHungConsumerProgram(local.target, prefix);
      await queue.add(job('hangs-on-the-cluster'), { jobId: 'hangs-on-the-cluster' });
      const result = await running;
      expect(result, result.stderr).to.include({ code: 0, stdout: 'timed out\n' });
      expect(performance.now() - started, 'ms to exit').to.be.below(5_000);
    });
  });

  describe('the replica fence', () => {
    it('counts nothing a replica did not confirm, and replaying that event is a no-op', async () => {
      const prefix = taggedPrefix();
      const receiverQueue = createReceiverQueue(local.target, prefix);
      receiverQueue.client.on('error', () => undefined);
      const replica = await local.cluster.replicaOf(await local.cluster.masterOf(`${prefix}:x`));
      try {
        await ready(receiverQueue.client);
        const enqueue = fencedTarget(receiverQueue, prefix, new ReplicaFence(100));
        // A replica that is connected but does not answer: the master still counts it (ROLE).
        replica.process.kill('SIGSTOP');
        await expect(enqueueMany(enqueue, [encodeWebhookJob(job('s1'))])).to.be.rejectedWith(
          NotReplicatedError,
        );
        replica.process.kill('SIGCONT');
        // The master did apply it: the receiver's spool drainer adding it again changes nothing.
        expect(await enqueueMany(enqueue, [encodeWebhookJob(job('s1'))])).to.deep.equal(['duplicate']);
        expect(await receiverQueue.queue.getWaitingCount()).to.equal(1);
      } finally {
        replica.process.kill('SIGCONT');
        await receiverQueue.close();
      }
      await local.cluster.waitUntilOk();
    });
  });

  describe('the replica fence, replayed on a new connection', () => {
    // WAIT on a connection that wrote nothing yet still waits for what the master wrote before
    // (Redis 7.0): the spool drainer's replay after a reconnect is not counted as confirmed early.
    it('does not count a duplicate as confirmed while the write it repeats has not reached the replica', async () => {
      const prefix = taggedPrefix();
      const first = createReceiverQueue(local.target, prefix);
      // The drainer's replay after a reconnect: a connection that wrote nothing yet.
      const later = createReceiverQueue(local.target, prefix);
      for (const queue of [first, later]) queue.client.on('error', () => undefined);
      const replica = await local.cluster.replicaOf(await local.cluster.masterOf(`${prefix}:x`));
      const target = (queue: ReceiverQueue) => fencedTarget(queue, prefix, new ReplicaFence(100));
      try {
        await Promise.all([ready(first.client), ready(later.client)]);
        replica.process.kill('SIGSTOP');
        await expect(enqueueMany(target(first), [encodeWebhookJob(job('w1'))])).to.be.rejectedWith(
          NotReplicatedError,
        );
        await expect(enqueueMany(target(later), [encodeWebhookJob(job('w1'))])).to.be.rejectedWith(
          NotReplicatedError,
        );
        replica.process.kill('SIGCONT');
        expect(await enqueueMany(target(later), [encodeWebhookJob(job('w1'))])).to.deep.equal(['duplicate']);
      } finally {
        replica.process.kill('SIGCONT');
        await Promise.all([first.close(), later.close()]);
      }
      await local.cluster.waitUntilOk();
    });

    // A receiver's long-lived connection whose own writes were confirmed, finding the mark another
    // connection just wrote, writes nothing. Its WAIT must still cover the repeated event: Redis
    // counts from the master's offset at the connection's last command, read-only ones included,
    // not from its last write. Should that change, a duplicate would be acknowledged while its
    // first copy is on the master only.
    it('does not count a duplicate as confirmed on a connection whose own writes were confirmed before', async () => {
      const prefix = taggedPrefix();
      const first = createReceiverQueue(local.target, prefix);
      const other = createReceiverQueue(local.target, prefix);
      for (const queue of [first, other]) queue.client.on('error', () => undefined);
      const replica = await local.cluster.replicaOf(await local.cluster.masterOf(`${prefix}:x`));
      const target = (queue: ReceiverQueue) => fencedTarget(queue, prefix, new ReplicaFence(100));
      const patient = (queue: ReceiverQueue) => fencedTarget(queue, prefix, new ReplicaFence(patientWaitMs));
      try {
        await Promise.all([ready(first.client), ready(other.client)]);
        expect(await enqueueMany(patient(other), [encodeWebhookJob(job('v0'))])).to.deep.equal(['queued']);
        replica.process.kill('SIGSTOP');
        await expect(enqueueMany(target(first), [encodeWebhookJob(job('v1'))])).to.be.rejectedWith(
          NotReplicatedError,
        );
        await expect(enqueueMany(target(other), [encodeWebhookJob(job('v1'))])).to.be.rejectedWith(
          NotReplicatedError,
        );
        replica.process.kill('SIGCONT');
        expect(await enqueueMany(patient(other), [encodeWebhookJob(job('v1'))])).to.deep.equal(['duplicate']);
      } finally {
        replica.process.kill('SIGCONT');
        await Promise.all([first.close(), other.close()]);
      }
      await local.cluster.waitUntilOk();
    });
  });

  // The cluster's subscriptions run on a connection of ioredis's own to one node, replaced only
  // when it ends or its node leaves the slot map. A link to that node alone cut without a FIN or
  // a RST (the node alive, still in the map) left it `ready` and silent: nothing published reached
  // the live streams of that process, and nobody learnt it. Each node is reached through a proxy
  // here (natMap), so one link can go silent.
  describe('a subscriber whose link to its node goes silent', () => {
    it('is replaced by the watch and subscribed again, and its user told to catch up', async () => {
      const proxies = await Promise.all(local.cluster.nodes.map((node) => startBlackholeProxy(node.port)));
      const natMap = Object.fromEntries(
        local.cluster.nodes.map((node, index) => [
          `127.0.0.1:${node.port}`,
          { host: '127.0.0.1', port: proxies[index]!.port },
        ]),
      );
      const subscriber = new Cluster([{ host: '127.0.0.1', port: proxies[0]!.port }], { natMap });
      subscriber.on('error', () => undefined);
      const publisher = connect();
      const { logger, messages } = recordingLogger();
      const stop = watchSubscriber(subscriber, { intervalMs: 100, timeoutMs: 300, logger });
      try {
        const channel = uniqueName('silent');
        await subscriber.subscribe(channel);
        let replaced = 0;
        onSubscriberReplaced(subscriber, () => {
          replaced += 1;
        });
        const received: string[] = [];
        subscriber.on('message', (_channel: string, message: string) => received.push(message));
        await eventually(async () => {
          await publisher.publish(channel, 'before');
          return received.includes('before') ? true : undefined;
        });
        const port = subscriberConnection(subscriber)?.options.port;
        const cut = proxies.find((proxy) => proxy.port === port);
        expect(cut, `the subscriber's port ${String(port)} is one of the proxies'`).to.not.equal(undefined);
        cut!.blackhole();
        await eventually(async () => {
          await publisher.publish(channel, 'after');
          return received.includes('after') ? true : undefined;
        });
        expect(replaced).to.be.at.least(1);
        expect(messages).to.include('the live subscription did not answer a PING in time: connecting again');
      } finally {
        stop();
        subscriber.disconnect();
        await Promise.all(proxies.map((proxy) => proxy.close()));
      }
    });
  });

  describe('a subscriber connection closed under it (CLIENT KILL TYPE pubsub)', () => {
    it('comes back as quickly after the eighth replacement in a row as after the first', async () => {
      const channel = uniqueName('killed');
      const subscriber = connect();
      const publisher = connect();
      await subscriber.subscribe(channel);
      // The cluster's own status says nothing of its subscriber connection: that one is asked.
      expect(isSubscriberConnected(subscriber)).to.equal(true);
      let received = 0;
      subscriber.on('message', () => {
        received += 1;
      });
      const backAfterMs: number[] = [];
      for (let kill = 1; kill <= 8; kill += 1) {
        for (const node of local.cluster.nodes) {
          const admin = new Redis({ host: '127.0.0.1', port: node.port });
          await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
          admin.disconnect();
        }
        const killedAt = performance.now();
        const before = received;
        await eventually(async () => {
          await publisher.publish(channel, String(kill));
          return received > before ? true : undefined;
        });
        backAfterMs.push(Math.round(performance.now() - killedAt));
        expect(isSubscriberConnected(subscriber)).to.equal(true);
      }
      // Each replacement waits like a reconnect (200 ms, 400 ms, ... up to 2 s), and that count
      // starts again once a new connection is up; without that it only grew.
      expect(backAfterMs.at(-1), backAfterMs.join(', ')).to.be.below(1_000);
    });
  });

  // Last: it moves the queue's slot to another node, then leaves that master without a replica.
  describe('the enqueue script across a planned failover (CLUSTER FAILOVER)', () => {
    it('reaches the promoted master within a few calls: a failed call re-reads the slot map', async () => {
      const prefix = taggedPrefix();
      const receiverQueue = createReceiverQueue(local.target, prefix);
      receiverQueue.client.on('error', () => undefined);
      try {
        await ready(receiverQueue.client);
        const enqueue: EnqueueTarget = {
          queue: receiverQueue.queue,
          redis: receiverQueue.client,
          markPrefix: prefix,
          dedupeSeconds: 60,
          fence: new ReplicaFence(patientWaitMs),
        };
        const before = await local.cluster.masterOf(`${prefix}:x`);
        const promoted = await local.cluster.replicaOf(before);
        expect(await enqueueMany(enqueue, [encodeWebhookJob(job('f0'))])).to.deep.equal(['queued']);
        await planFailover(promoted);
        // The first call after the switch may still go to the demoted node and fail (the receiver
        // spools that batch); the ones after it must reach the promoted master.
        const outcomes: string[] = [];
        for (let n = 1; n <= 10; n += 1) {
          outcomes.push(
            await enqueueMany(enqueue, [encodeWebhookJob(job(`f${n}`))]).then(
              ([outcome]) => String(outcome),
              (error: Error) => error.message.split(' ')[0] ?? 'error',
            ),
          );
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(outcomes.slice(2), outcomes.join(',')).to.deep.equal(Array(8).fill('queued'));
        expect((await local.cluster.masterOf(`${prefix}:x`)).address).to.equal(promoted.address);
        expect(await receiverQueue.queue.getJob('f10')).to.not.equal(null);

        // The demoted master, now the only replica, dies: nothing is left to wait for.
        await (await local.cluster.replicaOf(promoted)).stop('SIGKILL');
        const afterLoss: string[] = [];
        for (let n = 11; n <= 16; n += 1) {
          afterLoss.push(
            await enqueueMany(enqueue, [encodeWebhookJob(job(`f${n}`))]).then(
              ([outcome]) => String(outcome),
              (error: Error) => error.name,
            ),
          );
        }
        // At most the first call waits in vain (the master had not noticed the loss yet).
        expect(afterLoss.slice(1), afterLoss.join(',')).to.deep.equal(Array(5).fill('queued'));
        expect(enqueue.fence?.replicas).to.equal(0);
      } finally {
        await receiverQueue.close();
      }
    });
  });
});

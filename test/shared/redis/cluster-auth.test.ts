import { expect } from 'chai';
import { createWebhookQueue, webhookJobOptions } from '../../../shared/queue/webhook-queue.ts';
import { createRedis } from '../../../shared/redis/create-redis.ts';
import { refuseEvictingRedis } from '../../../shared/redis/refuse-evicting-redis.ts';
import { loadTrayConfig } from '../../../shared/config/tray-config.ts';
import { uniqueName } from '../../support/suite-resources.ts';
import { useRedisCluster } from '../../support/use-redis-cluster.ts';

const password = 'cluster-test-password';

describe('on a Redis Cluster that asks for a password (requirepass on every node)', function () {
  this.timeout(60_000);
  const local = useRedisCluster('redis-cluster-auth', { masters: 3, replicasPerMaster: 0, password });
  /** The services' target, as start-up makes it: the seeds, and REDIS_URL's password. */
  const configured = () =>
    loadTrayConfig({
      REDIS_CLUSTER_NODES: local.target.clusterNodes.map((node) => `${node.host}:${node.port}`).join(','),
      REDIS_URL: `redis://:${password}@not-used:1`,
      QUEUE_PREFIX: '{auth}',
    }).redis;

  it('is refused without the password (NOAUTH), so the test would see a missing AUTH', async () => {
    const client = createRedis(local.target, { maxRetriesPerRequest: 0 });
    client.on('error', () => undefined);
    try {
      const refused = await client.set('{k}:a', '1').then(
        () => 'written',
        (error: Error) => error.message,
      );
      // Without AUTH no node gives its slot map: the client never connects, the command fails.
      expect(refused).to.not.equal('written');
      expect(refused).to.match(/NOAUTH|Authentication required|unreachable/);
    } finally {
      client.disconnect();
    }
  });

  it('with REDIS_URL’s password: commands on every master, the eviction check, and a bull queue run', async () => {
    const client = createRedis(configured());
    client.on('error', () => undefined);
    const queue = createWebhookQueue({ redis: configured(), prefix: `{${uniqueName('a')}}` });
    queue.on('error', () => undefined);
    try {
      // Keys in many slots: every master is asked, each over its own authenticated connection.
      for (let n = 0; n < 30; n += 1) await client.set(`key-${n}`, String(n));
      expect(await client.get('key-29')).to.equal('29');
      const evicting: string[] = [];
      await refuseEvictingRedis(client, { onEvicting: (message) => evicting.push(message) });
      expect(evicting).to.deep.equal([]);
      const processed = new Promise<string>((resolve) => {
        void queue.process(async (job) => resolve(String(job.id)));
      });
      await queue.add(
        {
          dedupeKey: 'k1',
          webhook: 'default',
          receivedAt: new Date().toISOString(),
          event: 'post.didCreate',
          data: {},
        },
        { ...webhookJobOptions, jobId: 'k1' },
      );
      expect(await processed).to.equal('k1');
    } finally {
      await queue.close().catch(() => undefined);
      client.disconnect();
    }
  });
});

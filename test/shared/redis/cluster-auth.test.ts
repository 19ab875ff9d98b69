import { expect } from 'chai';
import { createWebhookQueue } from '../../../shared/queue/webhook-queue.ts';
import { createRedis } from '../../../shared/redis/create-redis.ts';
import { loadTrayConfig } from '../../../shared/config/tray-config.ts';
import { expectClusterServes } from '../../support/expect-cluster-serves.ts';
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
      await expectClusterServes(client, queue);
    } finally {
      await queue.close().catch(() => undefined);
      client.disconnect();
    }
  });
});

import { expect } from 'chai';
import { createWebhookQueue } from '../../../shared/queue/webhook-queue.ts';
import { createRedis, pingRedis } from '../../../shared/redis/create-redis.ts';
import { describeRedisFailure, isRedisAuthError } from '../../../shared/redis/redis-failure.ts';
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

  // A single server's refusal is a ReplyError (NOAUTH, WRONGPASS) that start-up takes as final; a
  // cluster's came as "unreachable", with the refusal only on ioredis's own error: start-up waited
  // out TRAY_STARTUP_WAIT_MS and then named REDIS_CLUSTER_NODES, not the password.
  for (const [what, auth] of [
    ['no password', ''],
    ['a wrong password', ':wrong-password@'],
  ] as const) {
    it(`fails a command with ${what} as a credentials error, not as an unreachable cluster`, async () => {
      const nodes = local.target.clusterNodes.map((node) => `${node.host}:${node.port}`).join(',');
      const target = loadTrayConfig({
        REDIS_CLUSTER_NODES: nodes,
        REDIS_URL: `redis://${auth}not-used:1`,
        QUEUE_PREFIX: '{auth}',
      }).redis;
      const client = createRedis(target, { maxRetriesPerRequest: 0 });
      client.on('error', () => undefined);
      try {
        const error = await pingRedis(client).then(
          () => undefined,
          (failed: unknown) => failed,
        );
        expect(isRedisAuthError(error), String(error)).to.equal(true);
        // Start-up's fatal line is the error's message: the credentials, not "unreachable".
        expect((error as Error).message).to.match(
          /^Redis Cluster did not accept the credentials \((NOAUTH|WRONGPASS)\): command not sent$/,
        );
        expect(describeRedisFailure(target, error)).to.match(
          /did not accept the credentials: (NOAUTH|WRONGPASS)/,
        );
      } finally {
        client.disconnect();
      }
    });
  }

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

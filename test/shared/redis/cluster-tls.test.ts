import { expect } from 'chai';
import { join } from 'node:path';
import { freePort } from '../../../scripts/lib/local-servers.ts';
import { loadTrayConfig } from '../../../shared/config/tray-config.ts';
import { createWebhookQueue } from '../../../shared/queue/webhook-queue.ts';
import { createRedis } from '../../../shared/redis/create-redis.ts';
import { isCluster } from '../../../shared/redis/redis-target.ts';
import { channelDidCreate, signedHeaders, testSecret } from '../../receiver/support/signed-request.ts';
import { expectClusterServes } from '../../support/expect-cluster-serves.ts';
import { cleanEnv, startScript } from '../../support/run-script.ts';
import { uniqueName } from '../../support/suite-resources.ts';
import { useRedisCluster } from '../../support/use-redis-cluster.ts';

const password = 'cluster-tls-password';

// Managed clusters often speak TLS only (in-transit encryption). Every node here listens on TLS
// alone, the cluster bus and replication too, with a certificate of the suite's own that names
// `localhost` and no address, and announces itself by that name; the seeds are given by it too.
describe('on a Redis Cluster that speaks TLS only (rediss:// REDIS_URL)', function () {
  this.timeout(60_000);
  const local = useRedisCluster('redis-cluster-tls', {
    masters: 3,
    replicasPerMaster: 0,
    password,
    tls: true,
  });
  const seeds = () => local.target.clusterNodes.map((node) => `${node.host}:${node.port}`).join(',');

  it('is not reached in clear, so the tests below would see TLS left out', async () => {
    const { tls: _tls, ...clear } = local.target;
    const client = createRedis({ ...clear, auth: { password } }, { maxRetriesPerRequest: 0 });
    client.on('error', () => undefined);
    try {
      const answer = await client.set('{k}:a', '1').then(
        () => 'written',
        (error: Error) => error.message,
      );
      expect(answer).to.not.equal('written');
    } finally {
      client.disconnect();
    }
  });

  it('takes rediss:// with REDIS_CLUSTER_NODES: commands on every master, the eviction check, pub/sub and a bull queue', async () => {
    const configured = loadTrayConfig({
      REDIS_CLUSTER_NODES: seeds(),
      REDIS_URL: `rediss://:${password}@not-used:1`,
      QUEUE_PREFIX: '{tls}',
    }).redis;
    if (!isCluster(configured)) throw new Error('expected a cluster target');
    expect(configured.tls).to.deep.equal({});
    // This process does not trust the test CA through NODE_EXTRA_CA_CERTS (read at start-up only),
    // so the target gets it the way a process started with it would.
    const target = { ...configured, tls: local.target.tls ?? {} };
    const client = createRedis(target);
    const subscriber = createRedis(target);
    const queue = createWebhookQueue({ redis: target, prefix: `{${uniqueName('tls')}}` });
    for (const connection of [client, subscriber]) connection.on('error', () => undefined);
    queue.on('error', () => undefined);
    try {
      await expectClusterServes(client, queue);
      const heard = new Promise<string>((resolve) =>
        subscriber.on('message', (_channel: string, text: string) => resolve(text)),
      );
      await subscriber.subscribe('tls-channel');
      await client.publish('tls-channel', 'over tls');
      expect(await heard).to.equal('over tls');
    } finally {
      await queue.close().catch(() => undefined);
      client.disconnect();
      subscriber.disconnect();
    }
  });

  it('receiver/main.ts trusting the cluster’s CA (NODE_EXTRA_CA_CERTS) acknowledges a webhook and queues it there', async () => {
    const port = await freePort();
    const prefix = `{${uniqueName('tls-receiver')}}`;
    const { child } = await startScript(
      'receiver/main.ts',
      cleanEnv({
        REDIS_CLUSTER_NODES: seeds(),
        REDIS_URL: `rediss://:${password}@not-used:1`,
        QUEUE_PREFIX: prefix,
        WEBHOOK_SECRETS: testSecret,
        // The test posts from loopback, which the platform's address lists do not hold.
        WEBHOOK_ALLOWLIST: 'off',
        SPOOL_DIR: join(local.dir, 'spool'),
        RECEIVER_PORT: String(port),
        NODE_EXTRA_CA_CERTS: local.caFile,
      }),
      /receiver listening/,
    );
    const queue = createWebhookQueue({ redis: { ...local.target, auth: { password } }, prefix });
    queue.on('error', () => undefined);
    try {
      const body = channelDidCreate('ch-tls');
      const answer = await fetch(`http://127.0.0.1:${port}/webhooks`, {
        method: 'POST',
        headers: { ...signedHeaders(body), 'content-type': 'application/json' },
        body,
      });
      expect(answer.status).to.equal(200);
      const deadline = Date.now() + 10_000;
      let waiting = 0;
      while (waiting === 0 && Date.now() < deadline) {
        waiting = (await queue.getJobCounts()).waiting;
        if (waiting === 0) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(waiting).to.equal(1);
    } finally {
      await queue.close().catch(() => undefined);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  });
});

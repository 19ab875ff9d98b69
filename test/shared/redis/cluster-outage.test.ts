import { expect } from 'chai';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { createRedis } from '../../../shared/redis/create-redis.ts';
import { useRedisCluster } from '../../support/use-redis-cluster.ts';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Client sockets this process opens during `run` (node:net publishes each on this channel). */
async function socketsOpenedDuring(run: () => Promise<void>): Promise<number> {
  let opened = 0;
  const count = () => {
    opened += 1;
  };
  subscribe('net.client.socket', count);
  try {
    await run();
  } finally {
    unsubscribe('net.client.socket', count);
  }
  return opened;
}

describe('createRedis on a Redis Cluster whose every node is gone', function () {
  this.timeout(120_000);
  const redisCluster = useRedisCluster('cluster-outage', { replicasPerMaster: 0, perTest: true });
  const connect = async (rules: Parameters<typeof createRedis>[1]) => {
    const client = redisCluster.connect(rules);
    await client.ping();
    return client;
  };

  it('a connection with subscriptions reconnects with backoff, not in a busy loop', async () => {
    // bull's subscriber connection and the live streams' both hold subscriptions like this one.
    const subscriber = await connect({ maxRetriesPerRequest: null, enableReadyCheck: false });
    await subscriber.subscribe('outage-test');
    await redisCluster.cluster.stop();
    await sleep(500);
    const sockets = await socketsOpenedDuring(() => sleep(4_000));
    // With ioredis's immediate reselection this was thousands (one per refused connect); with the
    // reconnect's backoff (200 ms, 400 ms, ... 2 s) a few per node and reconnect at most.
    expect(sockets).to.be.below(100);
  });

  it('a fail-fast connection refuses a command sent during the outage instead of holding it', async () => {
    const client = await connect({});
    await redisCluster.cluster.stop();
    await sleep(500);
    const started = performance.now();
    await expect(client.get('anything')).to.be.rejectedWith(
      /unreachable|closed|None of startup nodes|max retries/i,
    );
    expect(performance.now() - started).to.be.below(10_000);
  });
});

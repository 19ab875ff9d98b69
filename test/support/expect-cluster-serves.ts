import type Bull from 'bull';
import { expect } from 'chai';
import { webhookJobOptions, type WebhookJobData } from '../../shared/queue/webhook-queue.ts';
import type { RedisClient } from '../../shared/redis/create-redis.ts';
import { refuseEvictingRedis } from '../../shared/redis/refuse-evicting-redis.ts';

/**
 * What the services need from a Redis Cluster, through `client` and `queue` (connected however the
 * test sets them up): commands on every master (keys in many slots, each master over its own
 * connection), the eviction check on each master, and one bull job added and processed.
 */
export async function expectClusterServes(
  client: RedisClient,
  queue: Bull.Queue<WebhookJobData>,
): Promise<void> {
  for (let n = 0; n < 30; n += 1) await client.set(`key-${n}`, String(n));
  expect(await client.get('key-29')).to.equal('29');
  const evicting: string[] = [];
  await refuseEvictingRedis(client, { onRefused: (message) => evicting.push(message) });
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
}

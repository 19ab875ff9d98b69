import { expect } from 'chai';
import { createRedis } from '../../../shared/redis/create-redis.ts';
import { changeChannel, shardOf } from '../../../tray-service/live/change-channels.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bearer } from '../api/support/api-harness.ts';
import { named, openSse } from './support/sse-client.ts';
import { useLiveOnOwnRedis } from './support/use-live-on-own-redis.ts';

/** A user on another shard than `other`'s. */
function userBeside(other: string): string {
  for (let i = 0; ; i++) if (shardOf(`u-left-${i}`) !== shardOf(other)) return `u-left-${i}`;
}

// A Redis of its own: the test stops and restarts it.
describe('live change subscriptions across a Redis outage', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  const live = useLiveOnOwnRedis('live-shard-subscriptions', () => suite.storage);

  it('drops after the outage the channel of a shard whose last stream closed during it', async () => {
    const stays = 'u-stays';
    const left = userBeside(stays);
    const open = async (user: string) => {
      const stream = await openSse(`${live.instance.base}/notifications/v3/stream`, {
        Authorization: await bearer(user),
      });
      await stream.next(named('unread'));
      return stream;
    };
    const staying = await open(stays);
    const leaving = await open(left);
    let reconnects = 0;
    live.subscriber.on('reconnecting', () => (reconnects += 1));
    await live.redisServer.stop();
    // Closed while Redis is down: its unsubscribe fails once the connection gives up on queued
    // commands (after its first attempt to reconnect).
    leaving.close();
    await waitFor(() => reconnects >= 3, 10_000, 'the subscriber to try reconnecting');

    const probe = createRedis((await live.restartRedis()).url);
    try {
      const subscribers = async (user: string) =>
        Number(((await probe.pubsub('NUMSUB', changeChannel('live', shardOf(user)))) as [string, number])[1]);
      await waitFor(async () => (await subscribers(stays)) > 0, 10_000, 'the staying stream’s channel');
      // The instance renews its subscriptions (and ioredis its own) on the new connection.
      await waitFor(async () => (await subscribers(left)) === 0, 3_000, 'no subscriber').catch(
        () => undefined,
      );
      expect(await subscribers(left), 'subscribers of the closed stream’s shard').to.equal(0);
    } finally {
      probe.disconnect();
      staying.close();
    }
  });
});

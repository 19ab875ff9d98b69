import { expect } from 'chai';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { changeChannel, shardOf } from '../../../tray-service/live/change-channels.ts';
import { createChangePublisher } from '../../../tray-service/live/change-publisher.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bearer } from '../api/support/api-harness.ts';
import { dataOf, named, openSse } from './support/sse-client.ts';
import { useLiveOnOwnRedis } from './support/use-live-on-own-redis.ts';
import { writeRecord } from './support/write-record.ts';

const silent = createLogger({ name: 'test', level: 'silent' });

// A SUBSCRIBE Redis refuses with the connection up (an ACL user without the channel) was tried
// again only on a reconnect, which never came: the shard's streams stayed open and got no live
// change, with one log line to say why, until the instance restarted.
describe('a live subscription Redis refuses, with the connection up', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  const user = 'live-no-channels';
  const live = useLiveOnOwnRedis('live-refused', () => suite.storage, undefined, { subscriberUser: user });

  it('is tried again once the channel is allowed, and the stream gets what it missed, then live changes', async () => {
    const stream = await openSse(`${live.instance.base}/notifications/v3/stream`, {
      Authorization: await bearer('u-refused'),
    });
    try {
      await stream.next(named('unread'));
      const channel = changeChannel('live', shardOf('u-refused'));
      const subscribers = async () =>
        Number(((await live.redis.pubsub('NUMSUB', channel)) as [string, number])[1]);
      expect(await subscribers(), 'subscribed while refused').to.equal(0);
      // Written and announced while the subscription is refused: the announcement reaches no one.
      const publisher = createChangePublisher(live.redis, 'live', silent);
      await publisher.recordsWritten(await writeRecord(suite.storage, 'u-refused', 'p-missed', Date.now()));

      await live.redis.call('ACL', 'SETUSER', user, 'allchannels');
      await waitFor(async () => (await subscribers()) === 1, 10_000, 'the subscription taken again');
      const targets = () =>
        stream.events.filter(named('record')).map((event) => dataOf<NotificationRecord>(event).targetId);
      await stream.next(() => targets().includes('p-missed'), { timeoutMs: 10_000 });
      await publisher.recordsWritten(await writeRecord(suite.storage, 'u-refused', 'p-live', Date.now() + 1));
      await stream.next(() => targets().includes('p-live'), { timeoutMs: 10_000 });
    } finally {
      stream.close();
    }
  });
});

// A quiet stream's id moves up with its heartbeats, only while the subscription is up: it checked
// the connection, not the shard's channel, so a stream whose channel Redis refused for longer than
// the quiet time moved past what was announced meanwhile, and the catch-up once the channel was
// allowed started after it.
describe('a live subscription Redis refuses, on a stream quiet for longer than the quiet time', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  const user = 'live-no-channels-quiet';
  const live = useLiveOnOwnRedis(
    'live-refused-quiet',
    () => suite.storage,
    { heartbeatMs: 100, quietMs: 300 },
    { subscriberUser: user },
  );

  it('keeps its id while the channel is refused, so the catch-up once it is allowed sends what it missed', async () => {
    const stream = await openSse(`${live.instance.base}/notifications/v3/stream`, {
      Authorization: await bearer('u-refused-quiet'),
    });
    try {
      await stream.next(named('unread'));
      const publisher = createChangePublisher(live.redis, 'live', silent);
      await publisher.recordsWritten(
        await writeRecord(suite.storage, 'u-refused-quiet', 'p-missed', Date.now()),
      );
      // Past the quiet time and the settle window: a moved id would now start after the record.
      await new Promise((resolve) => setTimeout(resolve, 6_000));
      await live.redis.call('ACL', 'SETUSER', user, 'allchannels');
      const targets = () =>
        stream.events.filter(named('record')).map((event) => dataOf<NotificationRecord>(event).targetId);
      await stream.next(() => targets().includes('p-missed'), { timeoutMs: 40_000 });
    } finally {
      stream.close();
    }
  });
});

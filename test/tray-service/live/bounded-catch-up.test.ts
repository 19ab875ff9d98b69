import { expect } from 'chai';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createRedis, type RedisClient } from '../../../shared/redis/create-redis.ts';
import { startBanCache, type BanCache } from '../../../tray-service/http/auth/ban-cache.ts';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { testStack } from '../../support/test-stack.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { bearer } from '../api/support/api-harness.ts';
import { dataOf, named, openSse } from './support/sse-client.ts';
import { startLiveInstance, type StartedLiveInstance } from './support/start-live-instance.ts';
import { commentPublished } from './support/comment-published.ts';
import { withCatchUpRead } from './support/with-catch-up-read.ts';

const silent = createLogger({ name: 'test', level: 'silent' });
const USER = 'u-two-devices';

// A user's changes reach their streams one task at a time, in order, and a reconnect's catch-up is
// one of those tasks. One that never ends (a phone reading a long backlog a page now and then over
// a slow link, a read that hangs) held back every live event of the user's other streams for as
// long as it lasted: the desktop tab heard nothing while the phone caught up.
describe('a reconnect whose catch-up does not end, beside another stream of the same user', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  let redis: RedisClient;
  let bans: BanCache;
  let instance: StartedLiveInstance;
  /** While set, the catch-up reads of USER wait for it. */
  let stuck: Promise<void> | undefined;

  before(async () => {
    redis = createRedis(testStack().redisUrl);
    bans = await startBanCache(redis, { prefix: 'bounded-catch-up-bans', refreshMs: 200, logger: silent });
    instance = await startLiveInstance({
      storage: withCatchUpRead(suite.storage, async (userId, real) => {
        if (userId === USER) await stuck;
        return real(userId);
      }),
      redis,
      subscriber: createRedis(testStack().redisUrl),
      bans,
      streamsPerUser: 5,
      timings: { heartbeatMs: 15_000, quietMs: 3_600_000, catchUpMs: 1_000 },
    });
  });
  after(async () => {
    await instance?.close();
    bans?.stop();
    redis?.disconnect();
  });

  const url = () => `${instance.base}/notifications/v3/stream`;

  it('ends the reconnect to resume once its catch-up has run its time, and the other stream hears the live record', async () => {
    const desktop = await openSse(url(), { Authorization: await bearer(USER) });
    await desktop.next(named('unread'));
    const before = await openSse(url(), { Authorization: await bearer(USER) });
    const lastId = (await before.next(named('unread'))).id!;
    before.close();
    let release: () => void = () => undefined;
    stuck = new Promise<void>((resolve) => (release = resolve));
    try {
      const phone = await openSse(url(), { Authorization: await bearer(USER), 'Last-Event-ID': lastId });
      expect(phone.status).to.equal(200);
      await commentPublished(suite.storage, redis, USER, 'p-live');
      const record = await desktop.next(named('record'), { timeoutMs: 10_000 });
      expect(dataOf<NotificationRecord>(record).targetId).to.equal('p-live');
      // Ended with a reconnect hint, to resume from the id it holds, not left holding the turn.
      await phone.ended;
      phone.close();
    } finally {
      release();
      desktop.close();
    }
  });
});

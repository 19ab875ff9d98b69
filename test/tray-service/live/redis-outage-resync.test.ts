import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startRedis, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createRedis, type RedisClient } from '../../../shared/redis/create-redis.ts';
import type { InboxRecord } from '../../../tray-service/domain/inbox-record.ts';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { startBanCache, type BanCache } from '../../../tray-service/http/auth/ban-cache.ts';
import { changeChannel, shardOf } from '../../../tray-service/live/change-channels.ts';
import { createChangePublisher } from '../../../tray-service/live/change-publisher.ts';
import { seedActivities } from '../../support/seed-tray.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { bearer } from '../api/support/api-harness.ts';
import { dataOf, named, openSse, type SseStream } from './support/sse-client.ts';
import { startLiveInstance, type StartedLiveInstance } from './support/start-live-instance.ts';
import { withCatchUpRead } from './support/with-catch-up-read.ts';

const silent = createLogger({ name: 'test', level: 'silent' });
/** More users than the instance catches up at once after Redis comes back. */
const BUSY = 8;

// A Redis of its own: the test stops and restarts it. After the outage the instance catches its
// streams up a few users at a time; a live change for a user whose catch-up is not running yet must
// not move that stream's cursor past what changed during the outage.
describe('live streams caught up after a Redis outage, a live change arriving first', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  let dir: string;
  let redisServer: LocalServer;
  let port: number;
  let redis: RedisClient;
  let subscriber: RedisClient;
  let bans: BanCache;
  let instance: StartedLiveInstance | undefined;
  /** While set, every catch-up's first read waits for it. */
  let hold: Promise<void> | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'live-outage-resync-'));
    port = await freePort();
    redisServer = await startRedis({ dir: join(dir, 'redis'), port, persistent: true });
    redis = createRedis(redisServer.url);
    // The outage is the point of the test: connection errors are expected, not reported.
    redis.on('error', () => undefined);
    subscriber = createRedis(redisServer.url);
    subscriber.on('error', () => undefined);
    bans = await startBanCache(redis, { prefix: 'bans', refreshMs: 200, logger: silent });
    const storage = withCatchUpRead(suite.storage, async (userId, real) => {
      await hold;
      return real(userId);
    });
    instance = await startLiveInstance({ storage, redis, subscriber, bans, streamsPerUser: 5 });
  });
  after(async () => {
    await instance?.close();
    bans?.stop();
    redis?.disconnect();
    await redisServer?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const write = async (user: string, targetId: string, at: number) => {
    let written: InboxRecord[] = [];
    await suite.storage.writes.applyPersonal(seedActivities({ userId: user, targetId, lastUpdate: at }), {
      now: at,
      retentionDays: 90,
      onWritten: async (records) => {
        written = [...records];
      },
    });
    return written;
  };

  it('the stream still gets what was written during the outage', async () => {
    const users = [...Array.from({ length: BUSY }, (_, i) => `u-busy-${i}`), 'u-last'];
    const streams = new Map<string, SseStream>();
    for (const user of users) {
      const stream = await openSse(`${instance!.base}/notifications/v3/stream`, {
        Authorization: await bearer(user),
      });
      await stream.next(named('unread'));
      streams.set(user, stream);
    }
    await redisServer.stop();
    const now = Date.now();
    // Stored during the outage, its announcement lost; the next, 10 s later, is announced once the
    // instance has subscribed again.
    await write('u-last', 'p-lost', now);
    const live = await write('u-last', 'p-live', now + 10_000);

    let release: () => void = () => undefined;
    hold = new Promise<void>((resolve) => (release = resolve));
    redisServer = await startRedis({ dir: join(dir, 'redis'), port, persistent: true });
    const probe = createRedis(redisServer.url);
    try {
      const channel = changeChannel('live', shardOf('u-last'));
      for (;;) {
        const [, subscribed] = (await probe.pubsub('NUMSUB', channel)) as [string, number];
        if (Number(subscribed) > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      // The first users' catch-ups are held: u-last's is not queued yet when p-live arrives.
      const received = new Promise<void>((resolve) => subscriber.once('message', () => resolve()));
      await createChangePublisher(probe, 'live', silent).recordsWritten(live);
      await received;
    } finally {
      hold = undefined;
      release();
      probe.disconnect();
    }

    const last = streams.get('u-last')!;
    const targets = () =>
      last.events.filter(named('record')).map((event) => dataOf<NotificationRecord>(event).targetId);
    await last.next(() => targets().length >= 2, { timeoutMs: 10_000 }).catch(() => undefined);
    for (const stream of streams.values()) stream.close();
    expect(targets()).to.have.members(['p-lost', 'p-live']);
  });
});

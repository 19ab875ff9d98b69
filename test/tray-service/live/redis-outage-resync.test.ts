import { expect } from 'chai';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createRedis } from '../../../shared/redis/create-redis.ts';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { changeChannel, shardOf } from '../../../tray-service/live/change-channels.ts';
import { createChangePublisher } from '../../../tray-service/live/change-publisher.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { bearer } from '../api/support/api-harness.ts';
import { dataOf, lastId, named, openSse, type SseStream } from './support/sse-client.ts';
import { useLiveOnOwnRedis } from './support/use-live-on-own-redis.ts';
import { withCatchUpRead } from './support/with-catch-up-read.ts';
import { writeRecord } from './support/write-record.ts';

const silent = createLogger({ name: 'test', level: 'silent' });
/** More users than the instance catches up at once after Redis comes back. */
const BUSY = 8;

/** One open stream per user, in this order, each past its opening count. */
async function openStreams(base: string, users: readonly string[]): Promise<Map<string, SseStream>> {
  const streams = new Map<string, SseStream>();
  for (const user of users) {
    const stream = await openSse(`${base}/notifications/v3/stream`, { Authorization: await bearer(user) });
    await stream.next(named('unread'));
    streams.set(user, stream);
  }
  return streams;
}

// A Redis of its own: the test stops and restarts it. After the outage the instance catches its
// streams up a few users at a time; a live change for a user whose catch-up is not running yet must
// not move that stream's cursor past what changed during the outage.
describe('live streams caught up after a Redis outage, a live change arriving first', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  /** While set, every catch-up's first read waits for it. */
  let hold: Promise<void> | undefined;
  const live = useLiveOnOwnRedis('live-outage-resync', () =>
    withCatchUpRead(suite.storage, async (userId, real) => {
      await hold;
      return real(userId);
    }),
  );

  const write = (user: string, targetId: string, at: number) =>
    writeRecord(suite.storage, user, targetId, at);

  it('the stream still gets what was written during the outage', async () => {
    const users = [...Array.from({ length: BUSY }, (_, i) => `u-busy-${i}`), 'u-last'];
    const streams = await openStreams(live.instance.base, users);
    await live.redisServer.stop();
    const now = Date.now();
    // Stored during the outage, its announcement lost; the next, 10 s later, is announced once the
    // instance has subscribed again.
    await write('u-last', 'p-lost', now);
    const announced = await write('u-last', 'p-live', now + 10_000);

    let release: () => void = () => undefined;
    hold = new Promise<void>((resolve) => (release = resolve));
    const probe = createRedis((await live.restartRedis()).url);
    try {
      const channel = changeChannel('live', shardOf('u-last'));
      for (;;) {
        const [, subscribed] = (await probe.pubsub('NUMSUB', channel)) as [string, number];
        if (Number(subscribed) > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      // The first users' catch-ups are held: u-last's is not queued yet when p-live arrives.
      const received = new Promise<void>((resolve) => live.subscriber.once('message', () => resolve()));
      await createChangePublisher(probe, 'live', silent).recordsWritten(announced);
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

// One slow catch-up after the outage (a client with a long backlog reading slowly, or one that
// stopped reading) must hold back its own user's stream only, not every user caught up after it.
describe('live streams caught up after a Redis outage, one catch-up slow', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  /** While set, u-slow's catch-up reads wait for it. */
  let slow: Promise<void> | undefined;
  const live = useLiveOnOwnRedis('live-outage-slow', () =>
    withCatchUpRead(suite.storage, async (userId, real) => {
      if (userId === 'u-slow') await slow;
      return real(userId);
    }),
  );

  it('the other users still get what was written during the outage', async () => {
    // u-slow first, then more users than the instance catches up at once.
    const users = ['u-slow', ...Array.from({ length: BUSY + 1 }, (_, i) => `u-other-${i}`)];
    const streams = await openStreams(live.instance.base, users);
    let release: () => void = () => undefined;
    slow = new Promise<void>((resolve) => (release = resolve));
    try {
      await live.redisServer.stop();
      const last = users.at(-1)!;
      await writeRecord(suite.storage, last, 'p-during', Date.now());
      await live.restartRedis();
      const stream = streams.get(last)!;
      const got = await stream
        .next(
          (event) => named('record')(event) && dataOf<NotificationRecord>(event).targetId === 'p-during',
          {
            timeoutMs: 10_000,
          },
        )
        .then(
          () => true,
          () => false,
        );
      expect(got, `${last} got the record written during the outage while u-slow caught up`).to.equal(true);
    } finally {
      release();
      slow = undefined;
      for (const stream of streams.values()) stream.close();
    }
  });
});

// Users whose streams are still opening (a catch-up of a long backlog, read slowly) are owed a
// resync too, which runs after their opening. Waiting for that, they must not hold the places of
// the pool that catches users up after the subscription comes back: every other user's live
// changes would be held until those openings end.
describe('live streams caught up after the subscription is replaced, many users still opening', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  /** While set, the catch-up reads of the users named `u-opening-*` wait for it. */
  let opening: Promise<void> | undefined;
  const live = useLiveOnOwnRedis('live-resync-opening', () =>
    withCatchUpRead(suite.storage, async (userId, real) => {
      if (userId.startsWith('u-opening-')) await opening;
      return real(userId);
    }),
  );

  it('the other users get their live changes while those openings last', async () => {
    const base = live.instance.base;
    const openingUsers = Array.from({ length: BUSY }, (_, i) => `u-opening-${i}`);
    // Each resumes from an id of its own, so its opening catches up (and waits).
    const resumeFrom = new Map<string, string>();
    for (const [user, stream] of await openStreams(base, openingUsers)) {
      resumeFrom.set(user, lastId(stream.events) ?? '');
      stream.close();
    }
    let release: () => void = () => undefined;
    opening = new Promise<void>((resolve) => (release = resolve));
    const probe = createRedis(live.redisServer.url);
    const streams: SseStream[] = [];
    try {
      for (const user of openingUsers) {
        const stream = await openSse(`${base}/notifications/v3/stream`, {
          Authorization: await bearer(user),
          'Last-Event-ID': resumeFrom.get(user) ?? '',
        });
        await stream.next(named('unread'));
        streams.push(stream);
      }
      const free = (await openStreams(base, ['u-free'])).get('u-free')!;
      streams.push(free);
      // The subscription's connection is replaced while the openings wait.
      await probe.client('KILL', 'TYPE', 'pubsub');
      const channel = changeChannel('live', shardOf('u-free'));
      for (;;) {
        const [, subscribed] = (await probe.pubsub('NUMSUB', channel)) as [string, number];
        if (Number(subscribed) > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const announced = await writeRecord(suite.storage, 'u-free', 'p-while-opening', Date.now());
      await createChangePublisher(probe, 'live', silent).recordsWritten(announced);
      const got = await free
        .next(
          (event) =>
            named('record')(event) && dataOf<NotificationRecord>(event).targetId === 'p-while-opening',
          { timeoutMs: 5_000 },
        )
        .then(
          () => true,
          () => false,
        );
      expect(got, 'u-free got its record while the other users were still opening').to.equal(true);
    } finally {
      opening = undefined;
      release();
      probe.disconnect();
      for (const stream of streams) stream.close();
    }
  });
});

// More users than the pool's places whose catch-ups never end (clients that read a little now and
// then, or reads that hang): each holds its place for a bounded time, then its streams end and
// resume (their own openings catch up, outside the pool), so the users after them are caught up.
describe('live streams caught up after a Redis outage, more catch-ups stuck than the pool has places', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  /** While set, the catch-up reads of the users named `u-stuck-*` wait for it. */
  let stuck: Promise<void> | undefined;
  const live = useLiveOnOwnRedis(
    'live-outage-stuck',
    () =>
      withCatchUpRead(suite.storage, async (userId, real) => {
        if (userId.startsWith('u-stuck-')) await stuck;
        return real(userId);
      }),
    { heartbeatMs: 15_000, quietMs: 3_600_000, catchUpMs: 500 },
  );

  it('ends the stuck ones’ streams to resume, and catches up the others', async () => {
    const users = [...Array.from({ length: BUSY }, (_, i) => `u-stuck-${i}`), 'u-after'];
    const streams = await openStreams(live.instance.base, users);
    let release: () => void = () => undefined;
    stuck = new Promise<void>((resolve) => (release = resolve));
    try {
      await live.redisServer.stop();
      await writeRecord(suite.storage, 'u-after', 'p-during', Date.now());
      await live.restartRedis();
      const got = await streams
        .get('u-after')!
        .next(
          (event) => named('record')(event) && dataOf<NotificationRecord>(event).targetId === 'p-during',
          { timeoutMs: 10_000 },
        )
        .then(
          () => true,
          () => false,
        );
      expect(got, 'u-after got the record written during the outage').to.equal(true);
      // The stuck users' streams were ended (to resume), not left waiting.
      const ended = await Promise.race([
        Promise.all(users.slice(0, BUSY).map((user) => streams.get(user)!.ended)).then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5_000)),
      ]);
      expect(ended, 'the stuck users’ streams ended').to.equal(true);
    } finally {
      stuck = undefined;
      release();
      for (const stream of streams.values()) stream.close();
    }
  });
});

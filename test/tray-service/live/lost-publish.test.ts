import { expect } from 'chai';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createRedis, type RedisClient } from '../../../shared/redis/create-redis.ts';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { createChangePublisher, type ChangePublisher } from '../../../tray-service/live/change-publisher.ts';
import { createLostChanges } from '../../../tray-service/live/lost-changes.ts';
import { markRead } from '../../../tray-service/use-cases/mark-read.ts';
import { encodeStreamCursor, freshCursor } from '../../../tray-service/live/stream-cursor.ts';
import { SETTLE_MS } from '../../../tray-service/domain/settle-window.ts';
import { seedActivities } from '../../support/seed-tray.ts';
import { testStack } from '../../support/test-stack.ts';
import { waitFor } from '../../support/wait-for.ts';
import { useLiveTray } from './support/live-harness.ts';
import { dataOf, lastId, named, type SseEvent } from './support/sse-client.ts';

const silent = createLogger({ name: 'test', level: 'silent' });

const shown = (events: readonly SseEvent[]) =>
  events.filter(named('record')).map((event) => dataOf<NotificationRecord>(event).targetId);

// A publish can fail while the streams' own subscriptions stay up (the publishing process's
// connection to Redis drops, a command times out). The change is stored; a later change delivered
// to the stream moves its id past it, so neither the stream nor a reconnect from that id would
// ever look back far enough to send it.
describe('a change whose publish failed', function () {
  this.timeout(60_000);
  const tray = useLiveTray({ instances: 1 });
  let redis: RedisClient;
  let publisher: ChangePublisher;
  before(() => {
    // The worker's own connection, which the test takes down and brings back.
    redis = createRedis(testStack().redisUrl);
    redis.on('error', () => undefined);
    publisher = createChangePublisher(redis, tray.prefix, silent, { retryMs: 100 });
  });
  after(() => {
    redis.disconnect();
  });

  const stream = tray.stream;
  const write = (userId: string, targetId: string, now: number, changes: ChangePublisher) =>
    tray.worker.storage.writes.applyPersonal(seedActivities({ userId, targetId, lastUpdate: now }), {
      now,
      retentionDays: 90,
      onWritten: (records) => changes.recordsWritten(records),
    });
  /**
   * A stream resumed from a minute ago, its catch-up over; p-lost written while the worker's connection is down, then
   * p-later announced, ten seconds after it (the test stamps p-lost in the past rather than wait):
   * the stream's id moves past p-lost by more than the window.
   */
  const loseOne = async (user: string) => {
    // p-first, sent by the stream's catch-up: once it is shown, that read is over, and p-lost
    // (written after it) can reach the stream only by being made up for.
    await write(user, 'p-first', Date.now() - 30_000, tray.changes);
    const live = await stream(user, {
      'Last-Event-ID': encodeStreamCursor(freshCursor(Date.now() - 60_000)),
    });
    await live.next((event) => shown([event]).includes('p-first'));
    redis.disconnect();
    await write(user, 'p-lost', Date.now() - 2 * SETTLE_MS, publisher);
    await write(user, 'p-later', Date.now(), tray.changes);
    await live.next((event) => shown([event]).includes('p-later'));
    return live;
  };

  /** loseOne, then another device marks p-lost read: the stream hears of it (a bare `read`). */
  const loseThenMarkElsewhere = async (user: string) => {
    const live = await loseOne(user);
    await markRead(tray.worker.storage, tray.changes, {
      userId: user,
      verb: 'comment',
      targetId: 'p-lost',
      now: Date.now(),
    });
    await live.next((event) => event.event === 'read' || shown([event]).includes('p-lost'));
    return live;
  };

  // Each loss used to renew one pair kept per user, its earliest `since` kept: a user losing a
  // publish once a day kept the first one's for good, and every stream resuming after a later
  // resync was sent their whole tray since the first loss again.
  it('resends, to a stream resuming after one resync, nothing from before that resync’s own losses', async () => {
    const user = 'u-lost-twice';
    const now = Date.now();
    const hour = 3_600_000;
    const own = createRedis(testStack().redisUrl);
    try {
      const lost = createLostChanges(own, tray.prefix);
      // A loss from 20 h ago made up for then; one from 10 s ago, made up for now.
      await lost.record(user, now - 20 * hour - 60_000, now - 20 * hour);
      await write(user, 'p-had', now - 19 * hour, tray.changes);
      await lost.record(user, now - 10_000, now);
      await write(user, 'p-new', now - 5_000, tray.changes);
      // A stream that delivered up to 18 h ago, after the first resync: it had p-had.
      const resumed = await stream(user, {
        'Last-Event-ID': encodeStreamCursor({ at: now - 18 * hour, floor: now - 22 * hour, seen: new Map() }),
      });
      await resumed.next((event) => shown([event]).includes('p-new'), { timeoutMs: 5_000 });
      await new Promise((done) => setTimeout(done, 300));
      expect(shown(resumed.events)).to.deep.equal(['p-new']);
    } finally {
      own.disconnect();
    }
  });

  it('reaches a stream that stayed open once the publisher reaches Redis again', async () => {
    const live = await loseOne('u-lost-open');
    await redis.connect();
    await live
      .next((event) => shown([event]).includes('p-lost'), { timeoutMs: 5_000 })
      .catch(() => undefined);
    expect(shown(live.events)).to.include.members(['p-later', 'p-lost']);
  });

  // A bare mark of the lost record, from another device, came once the stream had moved past the
  // record's own state: counted delivered with its mark, the resync that made up for the loss then
  // skipped it, and the client kept the record without its new activity (or never got it at all).
  it('reaches a stream that stayed open though another device marked it read before the resync', async () => {
    const user = 'u-lost-marked';
    const live = await loseThenMarkElsewhere(user);
    await redis.connect();
    await live
      .next((event) => shown([event]).includes('p-lost'), { timeoutMs: 5_000 })
      .catch(() => undefined);
    expect(shown(live.events)).to.include('p-lost');
  });

  // The same, with the stream dropped after the bare mark and resumed from its id before the
  // resync: the id does not say which states went out as bare marks.
  it('reaches a stream resumed after another device marked it read, before the resync', async () => {
    const user = 'u-lost-marked-resumed';
    const live = await loseThenMarkElsewhere(user);
    live.close();
    const resumed = await stream(user, { 'Last-Event-ID': lastId(live.events) });
    await resumed.next(named('unread'));
    await redis.connect();
    await resumed
      .next((event) => shown([event]).includes('p-lost'), { timeoutMs: 5_000 })
      .catch(() => undefined);
    expect(shown([...live.events, ...resumed.events])).to.include('p-lost');
  });

  // A new stream owed nothing from before it opened (its floor). A state is stamped before its
  // write lands (waiting for locks, say), so one stamped just before the stream opened may land
  // after its client read its history: with its publish lost, the resync left it out as from
  // before the floor, and the client never got it.
  it('reaches a new stream for a record stamped just before it opened, once the publisher reaches Redis again', async () => {
    const user = 'u-lost-fresh';
    const openedAt = Date.now();
    const live = await stream(user);
    await live.next(named('unread'));
    redis.disconnect();
    await write(user, 'p-stamped-before', openedAt - 1_000, publisher);
    await redis.connect();
    await live.next((event) => shown([event]).includes('p-stamped-before'), { timeoutMs: 5_000 });
  });

  it('reaches a stream that was away then, when it resumes', async () => {
    const user = 'u-lost-away';
    const live = await loseOne(user);
    live.close();
    await redis.connect();
    // The resync has gone out (to no stream of the user) once it is kept for later ones.
    const lost = createLostChanges(redis, tray.prefix);
    await waitFor(async () => (await lost.of(user)).length > 0, 5_000, 'the resync kept').catch(
      () => undefined,
    );
    const again = await stream(user, { 'Last-Event-ID': lastId(live.events) });
    await again
      .next((event) => shown([event]).includes('p-lost'), { timeoutMs: 3_000 })
      .catch(() => undefined);
    expect(shown([...live.events, ...again.events])).to.include.members(['p-later', 'p-lost']);
  });
});

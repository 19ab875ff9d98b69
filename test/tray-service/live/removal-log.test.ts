import { expect } from 'chai';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createRedis, type RedisClient } from '../../../shared/redis/create-redis.ts';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { CHANGE_SHARDS, shardOf } from '../../../tray-service/live/change-channels.ts';
import { createChangePublisher } from '../../../tray-service/live/change-publisher.ts';
import { createLostChanges } from '../../../tray-service/live/lost-changes.ts';
import { recordingLogger } from '../../support/recording-logger.ts';
import {
  createRemovalLog,
  REMOVAL_KEEP_MS,
  REMOVALS_PER_USER,
  type RemovalLog,
} from '../../../tray-service/live/removal-log.ts';
import { testStack } from '../../support/test-stack.ts';
import { uniqueName } from '../../support/suite-resources.ts';
import { waitFor } from '../../support/wait-for.ts';
import { commentDeleteEvent } from '../worker/event-builder.ts';
import { commentOn, historyIds as historyIdsAt, listAfter } from './support/client-list.ts';
import { useLiveTray } from './support/live-harness.ts';
import { dataOf, lastId, named, type SseEvent, type SseStream } from './support/sse-client.ts';

const silent = createLogger({ name: 'test', level: 'silent' });

describe('live/removal-log against a real Redis', () => {
  let redis: RedisClient;
  let log: RemovalLog;
  before(() => {
    redis = createRedis(testStack().redisUrl);
    log = createRemovalLog(redis, uniqueName('removals'));
  });
  after(() => redis.disconnect());

  it('gives each user the keys removed at or after a time, oldest first, and no other user’s', async () => {
    await log.record(
      [
        { userId: 'u-a', key: 'k1' },
        { userId: 'u-b', key: 'k2' },
      ],
      1_000,
    );
    await log.record([{ userId: 'u-a', key: 'k3' }], 3_000);
    expect(await log.since('u-a', 0)).to.deep.equal(['k1', 'k3']);
    expect(await log.since('u-a', 1_000)).to.deep.equal(['k1', 'k3']);
    expect(await log.since('u-a', 1_001)).to.deep.equal(['k3']);
    expect(await log.since('u-b', 0)).to.deep.equal(['k2']);
    expect(await log.since('u-c', 0)).to.deep.equal([]);
  });

  it('keeps the latest time of a key removed twice, whichever call arrives last', async () => {
    await log.record([{ userId: 'u-twice', key: 'k' }], 5_000);
    await log.record([{ userId: 'u-twice', key: 'k' }], 4_000);
    expect(await log.since('u-twice', 4_500)).to.deep.equal(['k']);
  });

  it('keeps the removals of users in many shards, as a large deletion does', async () => {
    const users = Array.from({ length: 600 }, (_, i) => `u-many-${i}`);
    expect(new Set(users.map(shardOf)).size).to.be.greaterThan(CHANGE_SHARDS / 2);
    await log.record(
      users.map((userId) => ({ userId, key: `post_c1_${userId}` })),
      10_000,
    );
    for (const userId of [users[0]!, users[299]!, users[599]!])
      expect(await log.since(userId, 0)).to.deep.equal([`post_c1_${userId}`]);
  });

  it(`forgets removals older than its window and keeps at most ${REMOVALS_PER_USER} per user, the newest`, async () => {
    const at = Date.now();
    await log.record([{ userId: 'u-old', key: 'old' }], at - REMOVAL_KEEP_MS - 1);
    await log.record([{ userId: 'u-old', key: 'new' }], at);
    expect(await log.since('u-old', 0)).to.deep.equal(['new']);
    const many = Array.from({ length: REMOVALS_PER_USER + 5 }, (_, i) => ({
      userId: 'u-busy',
      key: `k${i}`,
    }));
    await log.record(many.slice(0, 5), at - 1);
    await log.record(many.slice(5), at);
    const kept = await log.since('u-busy', 0);
    expect(kept).to.have.lengthOf(REMOVALS_PER_USER);
    expect(kept).to.not.include.members(['k0', 'k4']);
  });

  // A post deleted in a community of hundreds of thousands removes a record of each member. Logged
  // as one script per shard, all sent at once, the later scripts waited past a Redis call's budget
  // (at 300,000 records), the logging failed and was retried the same size for good, and every
  // other call on the connection (rate limits, tickets) waited behind it or met the open breaker.
  it('logs a removal of 300,000 records while another call on the connection still answers in time', async function () {
    this.timeout(60_000);
    const removed = Array.from({ length: 300_000 }, (_, i) => ({
      userId: `u-huge-${i}`,
      key: `post_c2_u-huge-${i}`,
    }));
    let logged = false;
    const logging = log.record(removed, 20_000).finally(() => {
      logged = true;
    });
    // Sent while the logging is under way, on the same connection: asked and answered before it
    // ends (it takes seconds), so the answer did not wait behind the whole of it.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(logged, 'the logging still under way when asked').to.equal(false);
    expect(await log.since('u-a', 0)).to.deep.equal(['k1', 'k3']);
    expect(logged, 'answered while the logging was still under way').to.equal(false);
    await logging;
    for (const i of [0, 123_456, 299_999])
      expect(await log.since(`u-huge-${i}`, 0)).to.deep.equal([`post_c2_u-huge-${i}`]);
  });
});

describe('a stream that resumes after a record was removed', function () {
  this.timeout(60_000);
  const tray = useLiveTray({ instances: 1 });

  const historyIds = (user: string) => historyIdsAt(tray.instance(0).base, user);

  /** Reads `stream` until the unread count is `count`, then a moment more for what may follow. */
  const settled = async (
    stream: { next: (match: (event: SseEvent) => boolean) => Promise<SseEvent> },
    count: number,
  ) => {
    await stream.next(
      (event) =>
        event.event === 'unread' && dataOf<{ totalUnreadCount: number }>(event).totalUnreadCount === count,
    );
    await new Promise((resolve) => setTimeout(resolve, 400));
  };

  /**
   * Reads a resumed stream up to the new state of `user`'s record, which it sends as stored in
   * place of the logged removal (docs/live-tray.md), and checks no removal of it came after: up to
   * a marker record announced after everything else, so a late `removed` would be in by then.
   */
  async function backAfterRemoval(stream: SseStream, user: string): Promise<void> {
    const recordOf = (actionId: string) => (event: SseEvent) =>
      event.event === 'record' && dataOf<NotificationRecord>(event).lastActionId === actionId;
    const back = stream.events.indexOf(await stream.next(recordOf(`cm-${user}-3`)));
    await tray.worker.deliver(commentOn(user, `p-${user}-marker`, 9));
    await stream.next(recordOf(`cm-${user}-9`));
    const removedAfter = stream.events
      .slice(back)
      .filter((event) => event.event === 'removed')
      .flatMap((event) => dataOf<{ ids: string[] }>(event).ids);
    expect(removedAfter).to.not.include(`comment_p-${user}_${user}`);
  }

  it('is told `removed` for a record removed while it was away', async () => {
    const user = 'u-away-removal';
    const first = await tray.stream(user);
    await tray.worker.deliver(commentOn(user, `p-${user}`, 1));
    await tray.worker.deliver(commentOn(user, `p-${user}-2`, 2));
    await settled(first, 2);
    first.close();
    await tray.worker.deliver(
      commentDeleteEvent({ commentId: `cm-${user}-1`, post: { postId: `p-${user}`, owner: user } }),
    );

    const again = await tray.stream(user, { 'Last-Event-ID': lastId(first.events) });
    const removed = await again.next(named('removed'));
    expect(dataOf(removed)).to.deep.equal({ ids: [`comment_p-${user}_${user}`] });
    expect(listAfter([...first.events, ...again.events])).to.deep.equal(await historyIds(user));
  });

  it('ends with the record when it was removed and stored again while away', async () => {
    const user = 'u-away-back';
    const first = await tray.stream(user);
    await tray.worker.deliver(commentOn(user, `p-${user}`, 1));
    await settled(first, 1);
    first.close();
    await tray.worker.deliver(
      commentDeleteEvent({ commentId: `cm-${user}-1`, post: { postId: `p-${user}`, owner: user } }),
    );
    await tray.worker.deliver(commentOn(user, `p-${user}`, 3));

    const again = await tray.stream(user, { 'Last-Event-ID': lastId(first.events) });
    await backAfterRemoval(again, user);
    expect(listAfter([...first.events, ...again.events])).to.deep.equal(await historyIds(user));
  });

  // The stream got the removal and the record's return live, then dropped within the settle window
  // (docs/live-tray.md): its resume finds the removal logged and the record stored, and must leave
  // the client with the record (sent as stored, no removal after it).
  it('gets a record it already had again after a removal its resume repeats', async () => {
    const user = 'u-back-live';
    const first = await tray.stream(user);
    await tray.worker.deliver(commentOn(user, `p-${user}`, 1));
    await settled(first, 1);
    await tray.worker.deliver(
      commentDeleteEvent({ commentId: `cm-${user}-1`, post: { postId: `p-${user}`, owner: user } }),
    );
    await first.next(named('removed'));
    await tray.worker.deliver(commentOn(user, `p-${user}`, 3));
    await settled(first, 1);
    expect(listAfter(first.events)).to.deep.equal(await historyIds(user));
    first.close();

    const again = await tray.stream(user, { 'Last-Event-ID': lastId(first.events) });
    await backAfterRemoval(again, user);
    expect(listAfter([...first.events, ...again.events])).to.deep.equal(await historyIds(user));
  });

  it('is told of a removal whose logging failed once the publisher reaches Redis again', async () => {
    const user = 'u-unlogged';
    // The worker's own connection, which the test takes down and brings back.
    const redis = createRedis(testStack().redisUrl);
    redis.on('error', () => undefined);
    const publisher = createChangePublisher(redis, tray.prefix, silent, { retryMs: 100 });
    try {
      const first = await tray.stream(user);
      await tray.worker.deliver(commentOn(user, `p-${user}`, 1));
      await settled(first, 1);
      first.close();
      // Gone from storage, as the worker's removal left it; its announcement is the test's.
      await tray.worker.storage.records.deleteAll(user);
      redis.disconnect();
      await publisher.recordsRemoved([{ userId: user, key: `comment_p-${user}_${user}` }]);
      await redis.connect();
      const log = createRemovalLog(redis, tray.prefix);
      await waitFor(async () => (await log.since(user, 0)).length > 0, 5_000, 'the removal logged');

      const again = await tray.stream(user, { 'Last-Event-ID': lastId(first.events) });
      expect(dataOf(await again.next(named('removed')))).to.deep.equal({
        ids: [`comment_p-${user}_${user}`],
      });
    } finally {
      redis.disconnect();
    }
  });
});

describe('live/change-publisher, its removals when Redis refuses or is out of reach', function () {
  this.timeout(30_000);
  const prefix = uniqueName('removals-publisher');
  const clients: RedisClient[] = [];
  after(() => {
    for (const client of clients) client.disconnect();
  });
  const connect = (url = testStack().redisUrl) => {
    const client = createRedis(url);
    client.on('error', () => undefined);
    clients.push(client);
    return client;
  };
  const lost = () => createLostChanges(connect(), prefix);

  // A resync owed from a time after the removal's would start its catch-up after the removal (a
  // stream delivered a change 5 s later meanwhile): the removal would reach no stream.
  it('owes a removal whose publish failed from the removal’s own time', async () => {
    const admin = connect();
    await admin.call('ACL', 'SETUSER', 'no-publish', 'on', '>no-publish-pw', '~*', '&*', '+@all', '-publish');
    const url = new URL(testStack().redisUrl);
    url.username = 'no-publish';
    url.password = 'no-publish-pw';
    let clock = 1_000_000;
    const publisher = createChangePublisher(connect(url.toString()), prefix, silent, {
      retryMs: 50,
      now: () => clock,
    });
    const removing = publisher.recordsRemoved([{ userId: 'u-refused', key: 'k' }]);
    // The publish fails (NOPERM) well after the removal was logged.
    clock += 10_000;
    await removing;
    expect(await createRemovalLog(connect(), prefix).since('u-refused', 0)).to.deep.equal(['k']);
    await waitFor(async () => (await lost().of('u-refused')).length > 0, 5_000, 'the resync kept');
    expect((await lost().of('u-refused')).map((resync) => resync.since)).to.deep.equal([1_000_000]);
  });

  // A post deleted in a community of 300,000 logged its removals for seconds at the time taken
  // before, then announced them: a stream that delivered a change meanwhile and reconnected looked
  // back SETTLE_MS from it, past the log's entries.
  it('logs a large removal a part at a time, each at the time it is logged, and announces each then', async () => {
    let clock = 2_000_000;
    const redis = connect();
    const logged = createRemovalLog(redis, prefix);
    // Each part's logging takes its time: 3 s of the publisher's clock per part.
    const publisher = createChangePublisher(redis, prefix, silent, {
      now: () => (clock += 3_000),
    });
    const removed = Array.from({ length: 5_000 }, (_, n) => ({ userId: `u-part${n}`, key: `k${n}` }));
    await publisher.recordsRemoved(removed);
    // The first part at the first time taken, the later two parts each at its own (2,048 a part).
    for (const [n, at] of [
      [0, 2_003_000],
      [2_500, 2_006_000],
      [4_999, 2_009_000],
    ] as const) {
      expect(await logged.since(`u-part${n}`, at), `u-part${n}`).to.deep.equal([`k${n}`]);
      expect(await logged.since(`u-part${n}`, at + 1), `u-part${n}`).to.deep.equal([]);
    }
  });

  it('keeps at most maxUnloggedRemovals records while Redis is out of reach, the newest, and says so', async () => {
    const redis = connect();
    const { logger, messages } = recordingLogger();
    let clock = Date.now();
    const publisher = createChangePublisher(redis, prefix, logger, {
      retryMs: 100,
      now: () => clock,
      maxUnloggedRemovals: 3,
    });
    await new Promise((resolve) => redis.once('ready', resolve));
    redis.disconnect();
    for (const n of [1, 2, 3]) {
      await publisher.recordsRemoved([
        { userId: 'u-capped', key: `k${n}a` },
        { userId: 'u-capped', key: `k${n}b` },
      ]);
      clock += 1;
    }
    expect(messages.filter((message) => message.includes('dropped from the removal log'))).to.have.lengthOf(
      2,
    );
    await redis.connect();
    const log = createRemovalLog(connect(), prefix);
    await waitFor(async () => (await log.since('u-capped', 0)).length > 0, 5_000, 'the removals logged');
    expect(await log.since('u-capped', 0)).to.have.members(['k3a', 'k3b']);
  });
});

import { expect } from 'chai';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createRedis, type RedisClient } from '../../../shared/redis/create-redis.ts';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { startBanCache, type BanCache } from '../../../tray-service/http/auth/ban-cache.ts';
import { createChangePublisher } from '../../../tray-service/live/change-publisher.ts';
import { encodeStreamCursor, freshCursor } from '../../../tray-service/live/stream-cursor.ts';
import { testStack } from '../../support/test-stack.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { bearer } from '../api/support/api-harness.ts';
import { dataOf, openSse, type SseStream } from './support/sse-client.ts';
import { startLiveInstance, type StartedLiveInstance } from './support/start-live-instance.ts';
import { withCatchUpRead } from './support/with-catch-up-read.ts';
import { writeRecord } from './support/write-record.ts';

const silent = createLogger({ name: 'test', level: 'silent' });
const STREAM = '/notifications/v3/stream';

// A stream resumed while its user's work is queued on the instance (another tab's catch-up) must
// not have a live change delivered before its own catch-up: the change would move its cursor past
// what it missed, and come before its first `unread`.
describe('a resumed stream whose user has a live change queued before its catch-up', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  let redis: RedisClient;
  let subscriber: RedisClient;
  let bans: BanCache;
  let instance: StartedLiveInstance;
  /** While set, the next catch-up's first read waits for it (and says it has started). */
  let hold: { started: () => void; until: Promise<void> } | undefined;

  before(async () => {
    redis = createRedis(testStack().redisUrl);
    subscriber = createRedis(testStack().redisUrl);
    bans = await startBanCache(redis, { prefix: 'resume-behind-bans', refreshMs: 200, logger: silent });
    const storage = withCatchUpRead(suite.storage, async (userId, real) => {
      const held = hold;
      hold = undefined;
      if (held) {
        held.started();
        await held.until;
      }
      return real(userId);
    });
    instance = await startLiveInstance({ storage, redis, subscriber, bans, streamsPerUser: 5 });
  });
  after(async () => {
    await instance?.close();
    bans?.stop();
    redis?.disconnect();
  });

  const write = (user: string, targetId: string, at: number) =>
    writeRecord(suite.storage, user, targetId, at);
  const shown = (stream: SseStream) =>
    stream.events
      .filter((event) => event.event !== 'comment')
      .map((event) =>
        event.event === 'record' ? `record(${dataOf<NotificationRecord>(event).targetId})` : event.event,
      );

  it('gets its counts first, then what it missed, and the live change', async () => {
    const user = 'u-resume-behind';
    const now = Date.now();
    // An id a stream got two minutes ago; a record changed a minute ago, while the app was away.
    const resumeId = encodeStreamCursor(freshCursor(now - 120_000));
    await write(user, 'p-missed', now - 60_000);
    const live = await write(user, 'p-live', now);

    // Tab A resumes; its catch-up holds the user's queue on this instance.
    let started: () => void = () => undefined;
    const catchingUp = new Promise<void>((resolve) => (started = resolve));
    let release: () => void = () => undefined;
    hold = { started, until: new Promise<void>((resolve) => (release = resolve)) };
    const a = await openSse(`${instance.base}${STREAM}`, {
      Authorization: await bearer(user),
      'Last-Event-ID': resumeId,
    });
    await catchingUp;
    // The worker's announcement of p-live reaches the instance and is queued behind A's catch-up.
    const received = new Promise<void>((resolve) => subscriber.once('message', () => resolve()));
    await createChangePublisher(redis, 'live', silent).recordsWritten(live);
    await received;
    // Tab B resumes from the same id: its catch-up is queued behind that change.
    const b = await openSse(`${instance.base}${STREAM}`, {
      Authorization: await bearer(user),
      'Last-Event-ID': resumeId,
    });
    release();

    for (const stream of [a, b]) {
      await stream
        .next(() => shown(stream).filter((name) => name.startsWith('record')).length >= 2, {
          timeoutMs: 10_000,
        })
        .catch(() => undefined);
      stream.close();
    }
    // After the stream's own id (`opened`), which is no tray change.
    const expected = ['opened', 'unread', 'record(p-missed)', 'record(p-live)'];
    expect(shown(a).slice(0, 4), 'tab A').to.deep.equal(expected);
    expect(shown(b).slice(0, 4), 'tab B').to.deep.equal(expected);
  });
});

import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createRedis } from '../../../shared/redis/create-redis.ts';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { createChangePublisher } from '../../../tray-service/live/change-publisher.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { bearer } from '../api/support/api-harness.ts';
import { dataOf, named, openSse, type SseEvent } from './support/sse-client.ts';
import { useLiveOnOwnRedis } from './support/use-live-on-own-redis.ts';
import { writeRecord } from './support/write-record.ts';
import { afterRecordRead, createCatchUpHold } from './support/after-record-read.ts';
import { replaceSubscriber } from './support/replace-subscriber.ts';

const silent = createLogger({ name: 'test', level: 'silent' });
const STREAM = '/notifications/v3/stream';

const unreadOf = (event: SseEvent) => dataOf<{ totalUnreadCount: number }>(event).totalUnreadCount;

// A Redis of its own: the test drops the instance's subscriber connection. A live change that
// reached the instance while the user's earlier work (another stream's opening) still ran is
// delivered after the drop, so it waits for the stream's resync; the count it queued must wait too.
describe('a count queued just before the live subscription is replaced', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  const catchUps = createCatchUpHold();
  const live = useLiveOnOwnRedis('live-count-resync', () => afterRecordRead(suite.storage, catchUps.after));

  it('reaches the stream after the record it counts', async () => {
    const user = 'u-count-resync';
    const a = await openSse(`${live.instance.base}${STREAM}`, { Authorization: await bearer(user) });
    const opened = await a.next(named('unread'));
    expect(unreadOf(opened)).to.equal(0);
    if (opened.id === undefined) throw new Error('the unread event has no id to resume from');

    // Stream B resumes from A's id; its opening has read the tray and waits, holding the user's
    // work behind it.
    const { hasRead, open } = catchUps.hold(user);
    const b = await openSse(`${live.instance.base}${STREAM}`, {
      Authorization: await bearer(user),
      'Last-Event-ID': opened.id,
    });
    const probe = createRedis(live.redisServer.url);
    try {
      await hasRead;
      // p-new is written and announced: its delivery and its count wait behind B's opening.
      const announced = await writeRecord(suite.storage, user, 'p-new', Date.now());
      await createChangePublisher(live.redis, 'live', silent).recordsWritten(announced);
      await sleep(300);
      // Then the subscriber connection drops and comes back: every stream is owed a resync.
      await replaceSubscriber(probe, live.subscriber, user);
    } finally {
      open();
    }
    for (const stream of [a, b]) {
      await stream.next(
        (event) => event.event === 'record' && dataOf<NotificationRecord>(event).targetId === 'p-new',
        { timeoutMs: 10_000 },
      );
      await stream.next((event) => named('unread')(event) && unreadOf(event) === 1, { timeoutMs: 10_000 });
    }
    a.close();
    b.close();
    probe.disconnect();
    for (const stream of [a, b]) {
      const record = stream.events.findIndex(
        (event) => event.event === 'record' && dataOf<NotificationRecord>(event).targetId === 'p-new',
      );
      const counted = stream.events.findIndex((event) => named('unread')(event) && unreadOf(event) === 1);
      expect(record, 'the record of p-new').to.be.at.least(0);
      expect(counted, 'the count of p-new, after its record').to.be.greaterThan(record);
    }
  });
});

import { expect } from 'chai';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createRedis } from '../../../shared/redis/create-redis.ts';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { createChangePublisher } from '../../../tray-service/live/change-publisher.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { bearer } from '../api/support/api-harness.ts';
import { dataOf, named, openSse } from './support/sse-client.ts';
import { useLiveOnOwnRedis } from './support/use-live-on-own-redis.ts';
import { writeRecord } from './support/write-record.ts';
import { afterRecordRead, createCatchUpHold } from './support/after-record-read.ts';
import { replaceSubscriber } from './support/replace-subscriber.ts';

const silent = createLogger({ name: 'test', level: 'silent' });
const STREAM = '/notifications/v3/stream';

// A Redis of its own: the test drops the instance's subscriber connection. What is published while
// it is down reaches nobody here, so every stream catches up once it is back; a stream still
// opening then had read the tray before the drop, and its opening cannot cover what came after.
describe('a stream opening while the live subscription drops and comes back', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  const catchUps = createCatchUpHold();
  const live = useLiveOnOwnRedis('live-replaced-opening', () =>
    afterRecordRead(suite.storage, catchUps.after),
  );

  const write = (user: string, targetId: string, at: number) =>
    writeRecord(suite.storage, user, targetId, at);

  it('gets what was written while the subscription was down, as the user’s open stream does', async () => {
    const user = 'u-replaced-opening';
    const a = await openSse(`${live.instance.base}${STREAM}`, { Authorization: await bearer(user) });
    const unread = await a.next(named('unread'));
    if (unread.id === undefined) throw new Error('the unread event has no id to resume from');

    // Stream B resumes from A's id; its catch-up has read the tray and waits.
    const { hasRead, open } = catchUps.hold(user);
    const b = await openSse(`${live.instance.base}${STREAM}`, {
      Authorization: await bearer(user),
      'Last-Event-ID': unread.id,
    });
    const probe = createRedis(live.redisServer.url);
    try {
      await hasRead;
      // The subscriber connection drops; p-lost is written and its announcement reaches no one
      // (not published at all here: the same to this instance).
      await replaceSubscriber(probe, live.subscriber, user, () => write(user, 'p-lost', Date.now()));
    } finally {
      open();
    }
    // A's catch-up gives it p-lost; then a live record 10 s later moves both cursors on.
    await a.next(
      (event) => event.event === 'record' && dataOf<NotificationRecord>(event).targetId === 'p-lost',
      {
        timeoutMs: 10_000,
      },
    );
    const announced = await write(user, 'p-live', Date.now() + 10_000);
    await createChangePublisher(live.redis, 'live', silent).recordsWritten(announced);
    const targets = () =>
      b.events.filter(named('record')).map((event) => dataOf<NotificationRecord>(event).targetId);
    await b.next(() => targets().includes('p-live'), { timeoutMs: 10_000 });
    await b.next(() => targets().includes('p-lost'), { timeoutMs: 3_000 }).catch(() => undefined);
    a.close();
    b.close();
    probe.disconnect();
    expect(targets()).to.have.members(['p-lost', 'p-live']);
  });
});

import { expect } from 'chai';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { createChangePublisher } from '../../../tray-service/live/change-publisher.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { bearer } from '../api/support/api-harness.ts';
import { dataOf, named, openSse } from './support/sse-client.ts';
import { useLiveOnOwnRedis } from './support/use-live-on-own-redis.ts';
import { writeRecord } from './support/write-record.ts';

const silent = createLogger({ name: 'test', level: 'silent' });

// The instance's subscriber reaches Redis through a proxy that goes silent both ways without
// closing anything (a network cut): the connection stays `ready`, and TCP notices only after
// hours. The hub asks it a PING at each heartbeat (shortened here) and connects again when no
// answer comes, so its streams catch up on what was published meanwhile.
describe('live streams whose subscriber connection went silent (a network cut)', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  const live = useLiveOnOwnRedis(
    'live-silent-subscriber',
    () => suite.storage,
    { heartbeatMs: 300, quietMs: 3_600_000, subscriberPingTimeoutMs: 1_000 },
    { subscriberThroughProxy: true },
  );

  const write = (user: string, targetId: string, at: number) =>
    writeRecord(suite.storage, user, targetId, at);

  it('get what was published into the cut, within seconds', async () => {
    const user = 'u-silent-subscriber';
    const stream = await openSse(`${live.instance.base}/notifications/v3/stream`, {
      Authorization: await bearer(user),
    });
    await stream.next(named('unread'));
    live.proxy.blackhole();
    const cut = performance.now();
    // Published as the worker does, on the command connection, which still works.
    await createChangePublisher(live.redis, 'live', silent).recordsWritten(
      await write(user, 'p-cut', Date.now()),
    );
    const record = await stream.next(named('record'), { timeoutMs: 15_000 });
    stream.close();
    expect(dataOf<NotificationRecord>(record).targetId).to.equal('p-cut');
    expect(performance.now() - cut, 'ms from the cut to the record').to.be.below(10_000);
  });
});

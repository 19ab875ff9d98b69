import { expect } from 'chai';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { bearer } from '../api/support/api-harness.ts';
import { dataOf, named, openSse } from './support/sse-client.ts';
import { commentPublished } from './support/comment-published.ts';
import { useHeldCatchUp } from './support/use-held-catch-up.ts';

const USER = 'u-two-devices';

// A user's changes reach their streams one task at a time, in order, and a reconnect's catch-up is
// one of those tasks. One that never ends (a phone reading a long backlog a page now and then over
// a slow link, a read that hangs) held back every live event of the user's other streams for as
// long as it lasted: the desktop tab heard nothing while the phone caught up.
describe('a reconnect whose catch-up does not end, beside another stream of the same user', function () {
  this.timeout(60_000);
  const live = useHeldCatchUp('bounded-catch-up', {
    heartbeatMs: 15_000,
    quietMs: 3_600_000,
    catchUpMs: 1_000,
  });

  const url = () => `${live.instance.base}/notifications/v3/stream`;

  it('ends the reconnect to resume once its catch-up has run its time, and the other stream hears the live record', async () => {
    const desktop = await openSse(url(), { Authorization: await bearer(USER) });
    await desktop.next(named('unread'));
    const before = await openSse(url(), { Authorization: await bearer(USER) });
    const lastId = (await before.next(named('unread'))).id!;
    before.close();
    const release = live.hold(USER);
    try {
      const phone = await openSse(url(), { Authorization: await bearer(USER), 'Last-Event-ID': lastId });
      expect(phone.status).to.equal(200);
      await commentPublished(live.storage, live.redis, USER, 'p-live');
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

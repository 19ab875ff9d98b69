import { expect } from 'chai';
import request from 'supertest';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { bearer } from '../api/support/api-harness.ts';
import { membershipEvent, minute, postEvent } from '../worker/event-builder.ts';
import { useLiveTray } from './support/live-harness.ts';
import { dataOf, named } from './support/sse-client.ts';

// A leave delivered after the posts it precedes computes the member's records again
// (docs/tray-rules.md#leaving-and-rejoining-a-community): one left with no post goes, and the
// member's open streams are told, as for a removal, instead of showing it until they reconnect.
describe('a late leave that empties a record, on the live stream', function () {
  this.timeout(60_000);
  const tray = useLiveTray({ instances: 1 });

  it('sends removed with the record, then the counts without it', async () => {
    const user = 'u-late-leaver';
    const communityId = 'c-late-leave';
    await tray.worker.deliver(membershipEvent('join', [user], communityId, minute(0)));
    await tray.worker.deliver(
      postEvent({ postId: 'p-late-leave', author: 'u-ben', communityId, createdAt: minute(10) }),
    );
    const history = await request(tray.instance(0).base)
      .get('/notifications/v3/history')
      .set('Authorization', await bearer(user));
    const [record] = history.body.data as NotificationRecord[];
    if (!record) return expect.fail('the post made a record');
    const stream = await tray.stream(user);
    const opening = stream.events.find(named('unread'));
    expect(opening && dataOf(opening)).to.deep.equal({ totalUnreadCount: 1, totalUnseenCount: 1 });
    const from = stream.events.length;
    // Left before the post: nothing is left of the record.
    await tray.worker.deliver(membershipEvent('leave', [user], communityId, minute(5)));
    expect(dataOf(await stream.next(named('removed'), { from }))).to.deep.equal({
      ids: [record.v_tarid_uid],
    });
    await stream.next(
      (event) =>
        event.event === 'unread' &&
        JSON.stringify(dataOf(event)) === JSON.stringify({ totalUnreadCount: 0, totalUnseenCount: 0 }),
      { from },
    );
  });
});

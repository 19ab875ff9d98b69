import { expect } from 'chai';
import { createTrayClient } from '../../client/src/index.ts';
import { commentEvent, minute } from '../tray-service/worker/event-builder.ts';
import { collectStream } from './stream/support/collect-stream.ts';
import { useClientTarget } from './support/client-target.ts';

describe('createTrayClient', function () {
  this.timeout(30_000);

  it('refuses a baseUrl that is not an absolute URL, naming it', () => {
    expect(() => createTrayClient({ baseUrl: 'tray.example.org', getToken: () => 't' })).to.throw(
      TypeError,
      'createTrayClient: baseUrl must be an absolute URL, got "tray.example.org"',
    );
  });

  describe('stream()', () => {
    const target = useClientTarget();

    it('opens the live stream with the client’s connection and locale: the same user’s records, typed', async () => {
      const user = target.user('u-client-stream');
      const controller = new AbortController();
      const client = createTrayClient({
        baseUrl: target.baseUrl,
        getToken: () => target.token(user),
        locale: 'de',
      });
      const stream = collectStream(client.stream({ signal: controller.signal }));
      try {
        expect((await stream.next('unread')).data.totalUnreadCount).to.equal(0);
        await target.deliver(commentEvent({ postId: 'p-cs', postOwner: user, createdAt: minute(1) }));
        const record = await stream.next('record');
        expect(record.data.v_tarid_uid).to.equal(`comment_p-cs_${user}`);
        const [listed] = (await client.historyPage()).data;
        expect(record.data.description).to.equal(listed?.description).and.include('Cid');
        expect(record.data.description).to.not.equal('Cid commented on your post in Hiking Club');
      } finally {
        controller.abort();
      }
      expect(await stream.ended).to.equal(undefined);
    });
  });
});

import { expect } from 'chai';
import request from 'supertest';
import { messagesEnRows } from '../support/messages-en-rows.ts';
import { seedOfSpec, seedRecords } from '../support/seed-tray.ts';
import { bearer, useTrayApi } from './api/support/api-harness.ts';
import { commentEvent, minute } from './worker/event-builder.ts';
import { useWorker } from './worker/worker-harness.ts';

describe('tray service end to end: queue -> worker -> API', () => {
  const worker = useWorker();
  const api = useTrayApi();
  const app = () => api.app({ storage: worker.storage });

  const history = async (user: string, query = '') =>
    request(app())
      .get(`/notifications/v3/history${query}`)
      .set('Authorization', await bearer(user))
      .expect(200);

  describe('three people comment on Ana’s community post', () => {
    before(async () => {
      for (const [i, author] of ['u-cid', 'u-dee', 'u-eve'].entries()) {
        await worker.deliver(commentEvent({ author, commentId: `cm-${i}`, createdAt: minute(10 + i) }));
      }
    });

    it('shows Ana one grouped record, described with the latest two names', async () => {
      const res = await history('u-ana');
      expect(res.body.data).to.have.lengthOf(1);
      const [record] = res.body.data;
      expect(record).to.include({
        v_tarid_uid: 'comment_p-100_u-ana',
        verb: 'comment',
        targetId: 'p-100',
        actorsCount: 3,
        hasRead: false,
        description: 'Eve, Dee and 1 other commented on your post in Hiking Club',
      });
      expect(record.actors).to.deep.equal([{ name: 'Eve' }, { name: 'Dee' }, { name: 'Cid' }]);
    });

    it('renders the same record in the reader’s language', async () => {
      const res = await history('u-ana', '?locale=de');
      expect(res.headers['content-language']).to.equal('de');
      expect(res.body.data[0].description).to.include('Eve').and.include('Dee').and.not.include('commented');
    });

    it('counts it unread, and a new comment after reading makes it unread again', async () => {
      const auth = await bearer('u-ana');
      await request(app())
        .post('/notifications/v2/read')
        .set('Authorization', auth)
        .send({ verb: 'comment', targetId: 'p-100' })
        .expect(200);
      expect((await history('u-ana')).body.data[0].hasRead).to.equal(true);

      await worker.deliver(commentEvent({ author: 'u-fay', commentId: 'cm-9', createdAt: minute(20) }));
      const [record] = (await history('u-ana')).body.data;
      expect(record).to.include({
        hasRead: false,
        actorsCount: 4,
        description: 'Fay, Eve and 2 others commented on your post in Hiking Club',
      });
      const unread = await request(app()).get('/notifications/v3').set('Authorization', auth).expect(200);
      expect(unread.body).to.deep.equal({ data: { totalUnreadCount: 1, totalUnseenCount: 1 } });
    });

    it('shows the commenters nothing of their own action', async () => {
      expect((await history('u-cid')).body.data).to.deep.equal([]);
    });

    describe('an activity delivered after the user read their tray, though it happened before', () => {
      it('counts as unread: unread compares the tray’s clock, not the activity’s time', async () => {
        const auth = await bearer('u-gus');
        const unread = async () =>
          (await request(app()).get('/notifications/v3').set('Authorization', auth).expect(200)).body;
        await worker.deliver(
          commentEvent({
            postId: 'p-gus',
            postOwner: 'u-gus',
            author: 'u-cid',
            commentId: 'cm-g1',
            createdAt: minute(1),
          }),
        );
        expect(await unread()).to.deep.equal({ data: { totalUnreadCount: 1, totalUnseenCount: 1 } });
        await request(app()).post('/notifications/v2/last-read').set('Authorization', auth).expect(200);
        expect(await unread()).to.deep.equal({ data: { totalUnreadCount: 0, totalUnseenCount: 0 } });
        // Created two minutes in, long before the last-read call (now); delivered late (a retry, the
        // spool, a replay).
        await worker.deliver(
          commentEvent({
            postId: 'p-gus',
            postOwner: 'u-gus',
            author: 'u-dee',
            commentId: 'cm-g2',
            createdAt: minute(2),
          }),
        );
        expect(await unread()).to.deep.equal({ data: { totalUnreadCount: 1, totalUnseenCount: 1 } });
      });
    });
  });
});

describe('every row of the English reference table through the API’s description', () => {
  const api = useTrayApi();
  before(async () => {
    await seedRecords(
      api.storage,
      messagesEnRows.map(({ spec }, row) => seedOfSpec({ ...spec, userId: `reader-${row}` })),
    );
  });

  for (const [row, { spec, expected }] of messagesEnRows.entries()) {
    it(`${spec.verb} on a ${spec.feed} feed with ${spec.actors} actor(s): “${expected}”`, async () => {
      const res = await request(api.app({ now: () => Date.UTC(2026, 0, 16) }))
        .get('/notifications/v3/history')
        .set('Authorization', await bearer(`reader-${row}`))
        .set('Accept-Language', 'en')
        .expect(200);
      expect(res.body.data.map((r: { description: string }) => r.description)).to.deep.equal([expected]);
    });
  }
});

import { expect } from 'chai';
import request from 'supertest';
import { bearer, useTrayApi } from './api/support/api-harness.ts';
import { commentEvent, minute, userDeleteEvent } from './worker/event-builder.ts';
import { useWorker } from './worker/worker-harness.ts';

// Platform rules read through the public API after real deliveries (queue -> worker -> API);
// the decisions are in docs/tray-rules.md.
describe('platform rules end to end: queue -> worker -> API', () => {
  const worker = useWorker();
  const api = useTrayApi();

  const history = async (user: string, locale = 'en') =>
    (
      await request(api.app({ storage: worker.storage }))
        .get('/notifications/v3/history')
        .query({ locale })
        .set('Authorization', await bearer(user))
        .expect(200)
    ).body as { data: Array<Record<string, unknown>> };

  describe("a comment on Ana's user feed by Cid that mentions Ben", () => {
    before(async () => {
      await worker.deliver(
        commentEvent({
          feed: 'user',
          postOwner: 'u-ana',
          postId: 'p-feed',
          commentId: 'cm-feed',
          author: 'u-cid',
          mentions: ['u-ben'],
          createdAt: minute(3),
        }),
      );
    });

    it("tells Ben he was mentioned in Cid's feed, as the platform words it", async () => {
      const { data } = await history('u-ben');
      expect(data.map((record) => [record.verb, record.description])).to.deep.equal([
        ['mention', 'Cid has mentioned you on a comment in Cid feed'],
      ]);
    });

    it('tells Ana, the feed owner, that Cid commented on her post', async () => {
      const { data } = await history('u-ana');
      expect(data.map((record) => record.description)).to.deep.equal(['Cid commented on your post']);
    });
  });

  describe('a user who commented and is then deleted', () => {
    before(async () => {
      await worker.deliver(
        commentEvent({
          postId: 'p-del',
          commentId: 'cm-del',
          author: 'u-ivy',
          createdAt: minute(4),
          users: [{ userId: 'u-ivy', displayName: 'Ivy', avatarFileUrl: 'https://cdn.example/ivy.png' }],
        }),
      );
      await worker.deliver(
        commentEvent({ postId: 'p-ivy', commentId: 'cm-on-ivy', postOwner: 'u-ivy', author: 'u-jon' }),
      );
      expect((await history('u-ivy')).data).to.have.lengthOf(1);
      await worker.deliver(userDeleteEvent('u-ivy'));
    });

    it("shows as 'Deleted user', without their image, in other users' records", async () => {
      const { data } = await history('u-ana');
      const record = data.find((row) => row.targetId === 'p-del');
      expect(record).to.include({
        description: 'Deleted user commented on your post in Hiking Club',
        imageUrl: '',
      });
      expect(record).to.not.have.property('avatarCustomUrl');
    });

    it("is named in the reader's language in the message, while the record's actor name stays 'Deleted user'", async () => {
      const { data } = await history('u-ana', 'fr');
      const record = data.find((row) => row.targetId === 'p-del');
      expect(record).to.deep.include({
        description: 'Utilisateur supprimé a commenté votre publication dans Hiking Club',
        actors: [{ name: 'Deleted user' }],
      });
    });

    it('has an empty tray and nothing unread', async () => {
      expect((await history('u-ivy')).data).to.deep.equal([]);
      const unread = await request(api.app({ storage: worker.storage }))
        .get('/notifications/v3')
        .set('Authorization', await bearer('u-ivy'))
        .expect(200);
      expect(unread.body).to.deep.equal({ data: { totalUnreadCount: 0, totalUnseenCount: 0 } });
    });
  });
});

import { DAY_MS } from '../../../shared/time/durations.ts';
import { expect } from 'chai';
import {
  commentEvent,
  membershipEvent,
  minute,
  postEvent,
  userDeleteEvent,
  userUpdateEvent,
} from './event-builder.ts';
import { readAll, useWorker } from './worker-harness.ts';

const at = (minutes: number) => Date.parse(minute(minutes));

// docs/contract.md#tray-records (grouping and message rules), each rule through the real queue.
describe('tray worker: grouping rules (docs/contract.md#tray-records)', () => {
  const worker = useWorker();
  const comment = (
    post: string,
    author: string,
    minutes: number,
    extra: Parameters<typeof commentEvent>[0] = {},
  ) =>
    commentEvent({
      postId: post,
      commentId: `cm-${post}-${author}-${minutes}`,
      author,
      createdAt: minute(minutes),
      ...extra,
    });

  describe('actor count thresholds', () => {
    it('counts 1, 2, then 3 or more distinct actors on one (verb, target)', async () => {
      const counts: number[] = [];
      for (const [index, author] of ['u-cid', 'u-dee', 'u-eve', 'u-fay'].entries()) {
        await worker.deliver(comment('p-t1', author, index));
        const record = await worker.record('comment_p-t1_u-ana');
        counts.push(record?.actorsCount ?? 0);
        expect(record?.actors).to.have.length(Math.min(index + 1, 3));
      }
      expect(counts).to.deep.equal([1, 2, 3, 4]);
    });

    it('does not count an actor who acts again twice', async () => {
      await worker.deliver(comment('p-t2', 'u-cid', 1));
      await worker.deliver(comment('p-t2', 'u-cid', 2));
      expect(await worker.record('comment_p-t2_u-ana')).to.deep.include({
        actorsCount: 1,
        lastUpdate: at(2),
      });
    });
  });

  describe('up to 3 names ordered by activity', () => {
    it('lists the 3 latest distinct actors newest first; one acting again moves to the front', async () => {
      for (const [index, author] of ['u-cid', 'u-dee', 'u-eve', 'u-fay'].entries()) {
        await worker.deliver(comment('p-n1', author, index));
      }
      await worker.deliver(comment('p-n1', 'u-cid', 10));
      const record = await worker.record('comment_p-n1_u-ana');
      expect(record?.actors.map((actor) => actor.name)).to.deep.equal(['Cid', 'Fay', 'Eve']);
      expect(record).to.deep.include({
        actorsCount: 4,
        lastUpdate: at(10),
        lastActionId: 'cm-p-n1-u-cid-10',
      });
    });

    it('keeps lastUpdate and the latest action when an older activity is delivered late', async () => {
      await worker.deliver(comment('p-n2', 'u-cid', 10));
      await worker.deliver(comment('p-n2', 'u-dee', 5));
      const record = await worker.record('comment_p-n2_u-ana');
      expect(record).to.deep.include({
        actorsCount: 2,
        lastUpdate: at(10),
        lastActionId: 'cm-p-n2-u-cid-10',
      });
      expect(record?.actors.map((actor) => actor.name)).to.deep.equal(['Cid', 'Dee']);
    });
  });

  describe('mentions are never grouped', () => {
    it('gives each mention its own record, even by the same actor on the same post', async () => {
      await worker.deliver(comment('p-m1', 'u-cid', 1, { commentId: 'cm-m1', mentions: ['u-ben'] }));
      await worker.deliver(comment('p-m1', 'u-cid', 2, { commentId: 'cm-m2', mentions: ['u-ben'] }));
      const mentions = (await worker.records('u-ben')).filter((record) => record.verb === 'mention');
      expect(mentions.map((record) => [record.key, record.actorsCount])).to.deep.equal([
        ['mention_cm-m1_u-ben', 1],
        ['mention_cm-m2_u-ben', 1],
      ]);
    });
  });

  describe('image of the latest actor', () => {
    it("takes imageUrl and avatarCustomUrl from the latest actor's snapshot", async () => {
      await worker.deliver(
        comment('p-i1', 'u-cid', 1, {
          users: [{ userId: 'u-cid', avatarFileUrl: 'https://cdn.example/cid.png' }],
        }),
      );
      await worker.deliver(
        comment('p-i1', 'u-dee', 2, {
          users: [
            {
              userId: 'u-dee',
              avatarFileUrl: 'https://cdn.example/dee.png',
              avatarCustomUrl: 'https://cdn.example/dee-custom.png',
            },
          ],
        }),
      );
      const record = await worker.record('comment_p-i1_u-ana');
      expect(record?.actors[0]).to.deep.equal({
        userId: 'u-dee',
        name: 'Dee',
        imageUrl: 'https://cdn.example/dee.png',
        avatarCustomUrl: 'https://cdn.example/dee-custom.png',
        at: at(2),
      });
      expect(record?.actors[1]).to.have.property('imageUrl', 'https://cdn.example/cid.png');
    });
  });

  describe('expiry 90 days after lastUpdate', () => {
    it('expires at lastUpdate + 90 days, a time new activity moves', async () => {
      await worker.deliver(comment('p-e1', 'u-cid', 1));
      await worker.deliver(comment('p-e1', 'u-dee', 30));
      const visibleAt = async (now: number) =>
        (await readAll(worker.storage, 'u-ana', now)).some((record) => record.key === 'comment_p-e1_u-ana');
      expect(await visibleAt(at(1) + 90 * DAY_MS)).to.equal(true);
      expect(await visibleAt(at(30) + 90 * DAY_MS - 1)).to.equal(true);
      expect(await visibleAt(at(30) + 90 * DAY_MS)).to.equal(false);
    });

    it('purges a record once 90 days have passed since its last activity, and keeps a younger one', async () => {
      // Both delivered while live (a delivery already past its expiry writes nothing: the
      // conformance suite's writes cases), then purged one day on, when only the first is 90 days old.
      const now = Date.now();
      await worker.deliver(
        commentEvent({
          postId: 'p-e2',
          commentId: 'cm-e2',
          createdAt: new Date(now - 89.5 * DAY_MS).toISOString(),
        }),
      );
      await worker.deliver(
        commentEvent({
          postId: 'p-e3',
          commentId: 'cm-e3',
          createdAt: new Date(now - 88 * DAY_MS).toISOString(),
        }),
      );
      expect(await worker.record('comment_p-e2_u-ana')).not.to.equal(null);
      const dayOn = new Date(now + DAY_MS);
      const purged = await worker.storage.purgeExpired(dayOn);
      expect(purged.records).to.be.at.least(1);
      expect(await worker.record('comment_p-e2_u-ana')).to.equal(null);
      expect(await worker.record('comment_p-e3_u-ana')).not.to.equal(null);
      expect((await worker.storage.purgeExpired(dayOn)).records).to.equal(0);
    });
  });

  describe('leaving and rejoining a community', () => {
    const post = (postId: string, minutes: number) =>
      postEvent({
        postId,
        communityId: 'c-run',
        communityName: 'Run Club',
        author: 'u-ana',
        createdAt: minute(minutes),
      });
    const member = (kind: 'join' | 'leave', minutes: number) =>
      worker.deliver(membershipEvent(kind, ['u-ben'], 'c-run'), { receivedAt: minute(minutes) });
    const lastPost = async () => (await worker.record('post_c-run_u-ben'))?.lastActionId;

    it('updates a member, stops after leaving, resumes after rejoining without what happened while away', async () => {
      await member('join', 0);
      await worker.deliver(post('p-r1', 1));
      expect(await lastPost()).to.equal('p-r1');
      await member('leave', 2);
      await worker.deliver(post('p-r2', 3));
      expect(await lastPost()).to.equal('p-r1');
      await member('join', 4);
      // Created while away, delivered after the rejoin: not added retroactively.
      await worker.deliver(post('p-r3', 3.5));
      expect(await lastPost()).to.equal('p-r1');
      await worker.deliver(post('p-r4', 5));
      expect(await lastPost()).to.equal('p-r4');
      expect((await worker.record('post_c-run_u-ben'))?.actorsCount).to.equal(1);
    });

    it('ignores an older join delivered after a newer leave', async () => {
      await worker.deliver(membershipEvent('join', ['u-cid'], 'c-run'), { receivedAt: minute(10) });
      await worker.deliver(membershipEvent('leave', ['u-cid'], 'c-run'), { receivedAt: minute(20) });
      await worker.deliver(membershipEvent('join', ['u-cid'], 'c-run'), { receivedAt: minute(19) });
      await worker.deliver(post('p-r5', 21));
      expect(await worker.record('post_c-run_u-cid')).to.equal(null);
    });
  });

  describe('a display name change', () => {
    it('keeps the old name in existing records and uses the new one for later activity', async () => {
      await worker.deliver(comment('p-d1', 'u-hal', 1));
      await worker.deliver(userUpdateEvent({ userId: 'u-hal', displayName: 'Hal Jordan' }));
      expect((await worker.record('comment_p-d1_u-ana'))?.actors.map((a) => a.name)).to.deep.equal(['Hal']);
      await worker.deliver(
        comment('p-d2', 'u-hal', 2, { users: [{ userId: 'u-hal', displayName: 'Hal Jordan' }] }),
      );
      expect((await worker.record('comment_p-d2_u-ana'))?.actors.map((a) => a.name)).to.deep.equal([
        'Hal Jordan',
      ]);
    });
  });

  describe('a deleted user', () => {
    it('shows as `Deleted user` in records and loses their own tray', async () => {
      await worker.deliver(
        comment('p-x1', 'u-ivy', 1, {
          users: [{ userId: 'u-ivy', avatarFileUrl: 'https://cdn.example/ivy.png' }],
        }),
      );
      await worker.deliver(comment('p-x1', 'u-jon', 2));
      await worker.deliver(
        commentEvent({ postId: 'p-x2', commentId: 'cm-x2', postOwner: 'u-ivy', author: 'u-jon' }),
      );
      await worker.deliver(userDeleteEvent('u-ivy'));
      const record = await worker.record('comment_p-x1_u-ana');
      expect(record?.actors.map((a) => [a.name, a.imageUrl])).to.deep.equal([
        ['Jon', undefined],
        ['Deleted user', undefined],
      ]);
      expect(await worker.records('u-ivy')).to.deep.equal([]);
    });

    it('receives nothing delivered after the deletion and shows as `Deleted user` in their actions delivered then', async () => {
      await worker.deliver(userDeleteEvent('u-lea'));
      // Both made before the deletion, delivered after it (a retry, the spool, a replay).
      await worker.deliver(
        comment('p-x3', 'u-lea', 1, {
          users: [{ userId: 'u-lea', displayName: 'Lea', avatarFileUrl: 'https://cdn.example/lea.png' }],
        }),
      );
      await worker.deliver(
        commentEvent({ postId: 'p-x4', commentId: 'cm-x4', postOwner: 'u-lea', author: 'u-jon' }),
      );
      expect(
        (await worker.record('comment_p-x3_u-ana'))?.actors.map((a) => [a.name, a.imageUrl]),
      ).to.deep.equal([['Deleted user', undefined]]);
      expect(await worker.records('u-lea')).to.deep.equal([]);
    });
  });

  describe('an author acting on their own content', () => {
    it('is never notified (own post commented, own comment replied to, self-mention)', async () => {
      await worker.deliver(
        commentEvent({
          postId: 'p-o1',
          commentId: 'cm-o1',
          postOwner: 'u-kim',
          author: 'u-kim',
          mentions: ['u-kim'],
        }),
      );
      await worker.deliver(
        commentEvent({
          postId: 'p-o1',
          commentId: 'cm-o2',
          author: 'u-kim',
          parent: { commentId: 'cm-o1', userId: 'u-kim' },
        }),
      );
      expect(await worker.records('u-kim')).to.deep.equal([]);
    });
  });

  describe('the unread flag', () => {
    it('starts unread, turns unread again on new activity, and stays read on a redelivery', async () => {
      const first = comment('p-h1', 'u-cid', 1);
      await worker.deliver(first);
      expect((await worker.record('comment_p-h1_u-ana'))?.hasRead).to.equal(false);
      await worker.storage.records.markRead('u-ana', 'comment', 'p-h1', Date.now());
      await worker.deliver(first);
      expect((await worker.record('comment_p-h1_u-ana'))?.hasRead).to.equal(true);
      await worker.deliver(comment('p-h1', 'u-dee', 2));
      expect((await worker.record('comment_p-h1_u-ana'))?.hasRead).to.equal(false);
    });
  });
});

import { DAY_MS } from '../../../shared/time/durations.ts';
import { expect } from 'chai';
import { commentEvent, membershipEvent, minute, postEvent, reactionEvent } from './event-builder.ts';
import { useWorker } from './worker-harness.ts';

const at = (minutes: number) => Date.parse(minute(minutes));

// One test per row of "Record fields per verb" (docs/contract.md#event-catalogue), through the real queue.
describe('tray worker: record fields per verb', () => {
  const worker = useWorker();

  describe('post.didCreate in a community', () => {
    before(async () => {
      await worker.deliver(membershipEvent('join', ['u-ana', 'u-ben', 'u-cid']), { receivedAt: minute(-10) });
      await worker.deliver(postEvent({ postId: 'p-100', author: 'u-ana', createdAt: minute(0) }));
    });

    it('gives each other member a `post` record keyed by the community', async () => {
      const record = await worker.record('post_c-hike_u-ben');
      expect(record).to.deep.include({
        userId: 'u-ben',
        verb: 'post',
        targetType: 'community',
        targetId: 'c-hike',
        targetName: 'Hiking Club',
        lastActionId: 'p-100',
        feed: { kind: 'community', id: 'c-hike', name: 'Hiking Club' },
        actorsCount: 1,
        lastUpdate: at(0),
        hasRead: false,
      });
      expect(record).not.to.have.property('parentTargetId');
      expect(record?.actors).to.deep.equal([{ userId: 'u-ana', name: 'Ana', at: at(0) }]);
      // Expires 90 days after its lastUpdate.
      const [later] = await worker.storage.records.changedSince('u-ben', 0, at(0) + 90 * DAY_MS);
      expect(later).to.equal(undefined);
      expect(await worker.record('post_c-hike_u-cid')).to.have.property('lastActionId', 'p-100');
    });

    it('does not notify the author', async () => {
      expect(await worker.record('post_c-hike_u-ana')).to.equal(null);
    });

    it('groups the next post in the community into the same record', async () => {
      await worker.deliver(postEvent({ postId: 'p-101', author: 'u-ben', createdAt: minute(1) }));
      const record = await worker.record('post_c-hike_u-cid');
      expect(record?.actors.map((actor) => actor.name)).to.deep.equal(['Ben', 'Ana']);
      expect(record).to.deep.include({ actorsCount: 2, lastActionId: 'p-101', lastUpdate: at(1) });
    });
  });

  describe('comment.didCreate on a community post', () => {
    it('gives the post owner a `comment` record on the post, parent = the community', async () => {
      await worker.deliver(
        commentEvent({
          commentId: 'cm-7',
          postId: 'p-300',
          postOwner: 'u-ana',
          author: 'u-cid',
          segmentNumber: 4,
        }),
      );
      expect(await worker.record('comment_p-300_u-ana')).to.deep.include({
        verb: 'comment',
        targetType: 'post',
        targetId: 'p-300',
        parentTargetId: 'c-hike',
        lastActionId: 'cm-7',
        lastActionSegmentNo: 4,
        targetName: 'Hiking Club',
        feed: { kind: 'community', id: 'c-hike', name: 'Hiking Club' },
      });
    });
  });

  describe('comment.didCreate on a user-feed post', () => {
    it("sets parent = the feed owner's user id and names the feed after its owner", async () => {
      await worker.deliver(
        commentEvent({
          commentId: 'cm-8',
          postId: 'p-301',
          postOwner: 'u-ana',
          author: 'u-cid',
          feed: 'user',
        }),
      );
      expect(await worker.record('comment_p-301_u-ana')).to.deep.include({
        parentTargetId: 'u-ana',
        targetName: 'Ana',
        feed: { kind: 'user', id: 'u-ana', name: 'Ana' },
      });
    });
  });

  describe('comment.didCreate replying to a comment', () => {
    it('gives the parent comment owner a `mentreply` record on that comment, parent = the post', async () => {
      await worker.deliver(
        commentEvent({
          commentId: 'cm-9',
          postId: 'p-302',
          author: 'u-dee',
          parent: { commentId: 'cm-1', userId: 'u-cid' },
          segmentNumber: 2,
        }),
      );
      expect(await worker.record('mentreply_cm-1_u-cid')).to.deep.include({
        verb: 'mentreply',
        targetType: 'post',
        targetId: 'cm-1',
        parentTargetId: 'p-302',
        lastActionId: 'cm-9',
        lastActionSegmentNo: 2,
      });
      expect(await worker.record('comment_p-302_u-ana')).to.equal(null);
    });
  });

  describe('reaction.didAdd on a post', () => {
    it('gives the post owner a `reaction` record on the post, parent = the community', async () => {
      await worker.deliver(
        reactionEvent({ reactionId: 'r-9', postId: 'p-303', postOwner: 'u-ana', author: 'u-dee' }),
      );
      const record = await worker.record('reaction_p-303_u-ana');
      expect(record).to.deep.include({
        verb: 'reaction',
        targetType: 'post',
        targetId: 'p-303',
        parentTargetId: 'c-hike',
        lastActionId: 'r-9',
      });
      expect(record).not.to.have.property('lastActionSegmentNo');
    });
  });

  describe('reaction.didAdd on a comment', () => {
    it('gives the comment owner a `mentreact` record on the comment, parent = the post', async () => {
      await worker.deliver(
        reactionEvent({
          reactionId: 'r-10',
          postId: 'p-304',
          comment: { commentId: 'cm-2', userId: 'u-cid' },
        }),
      );
      expect(await worker.record('mentreact_cm-2_u-cid')).to.deep.include({
        verb: 'mentreact',
        targetType: 'post',
        targetId: 'cm-2',
        parentTargetId: 'p-304',
        lastActionId: 'r-10',
      });
    });
  });

  describe('a mention in a post', () => {
    it('gives the mentioned user a `mention` record keyed by the post, without parent', async () => {
      await worker.deliver(
        postEvent({ postId: 'p-400', author: 'u-ana', mentions: ['u-eve'], createdAt: minute(3) }),
      );
      const record = await worker.record('mention_p-400_u-eve');
      expect(record).to.deep.include({
        verb: 'mention',
        mentionIn: 'post',
        targetType: 'post',
        targetId: 'p-400',
        lastActionId: 'p-400',
      });
      expect(record).not.to.have.property('parentTargetId');
    });

    it("on a user feed names the author's feed", async () => {
      await worker.deliver(
        postEvent({ postId: 'p-401', author: 'u-ana', feed: 'user', mentions: ['u-eve'] }),
      );
      expect(await worker.record('mention_p-401_u-eve')).to.deep.include({
        feed: { kind: 'user', id: 'u-ana', name: 'Ana' },
      });
      // Posts on a user feed are not tray events (docs/contract.md#postdidcreate): only the mention exists.
      const users = ['u-ana', 'u-ben', 'u-cid', 'u-dee', 'u-eve'];
      const fromPost = (await Promise.all(users.map((user) => worker.records(user))))
        .flat()
        .filter((record) => record.lastActionId === 'p-401');
      expect(fromPost.map((record) => record.key)).to.deep.equal(['mention_p-401_u-eve']);
    });
  });

  describe('a mention in a comment', () => {
    it('gives the mentioned user a `mention` record keyed by the comment, parent = the post', async () => {
      await worker.deliver(
        commentEvent({ commentId: 'cm-20', postId: 'p-305', author: 'u-cid', mentions: ['u-eve'] }),
      );
      const record = await worker.record('mention_cm-20_u-eve');
      expect(record).to.deep.include({
        verb: 'mention',
        mentionIn: 'comment',
        targetId: 'cm-20',
        parentTargetId: 'p-305',
        lastActionId: 'cm-20',
      });
      expect(record).not.to.have.property('lastActionSegmentNo');
    });
  });

  // A payload field the mapping does not need to refuse the event for must not cost every
  // recipient their record (docs/contract.md#event-catalogue).
  describe('a payload with a profile without a name, and a mention of another kind than a user', () => {
    it('still gives the post owner the comment and the mentioned user the mention, naming them by id', async () => {
      const event = commentEvent({
        commentId: 'cm-30',
        postId: 'p-330',
        author: 'u-cid',
        mentions: ['u-eve'],
      });
      event.data.users = [
        { userId: 'u-cid', displayName: null },
        { userId: 'u-ana', displayName: 'Ana' },
        { userId: 'u-eve' },
      ];
      (event.data.comment as Record<string, unknown>).mentionees = [
        { type: 'channel' },
        { type: 'user', userIds: ['u-eve'] },
      ];
      await worker.deliver(event);
      const comment = await worker.record('comment_p-330_u-ana');
      expect(comment?.actors.map((actor) => actor.name)).to.deep.equal(['u-cid']);
      expect((await worker.record('mention_cm-30_u-eve'))?.lastActionId).to.equal('cm-30');
    });
  });
});

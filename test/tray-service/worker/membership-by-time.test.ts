import { expect } from 'chai';
import type { TrayRecord } from '../../../tray-service/domain/tray-record.ts';
import { commentEvent, membershipEvent, minute, postEvent, type TestEnvelope } from './event-builder.ts';
import { useWorker } from './worker-harness.ts';

/** What a reader sees of a record, and what grouping decided; not the tray's clock (unreadAt, changedAt). */
function visible(record: TrayRecord) {
  const { unreadAt: _unreadAt, changedAt: _changedAt, ...rest } = record;
  return rest;
}

// docs/tray-engine.md#membership-by-time, through the real queue: a member receives a community
// post iff they were a member at the post's createdAt, and nothing of the community's targets
// while away (docs/tray-rules.md#leaving-and-rejoining-a-community), whatever order the events
// arrive in.
describe('tray worker: membership by time', () => {
  const worker = useWorker();
  const post = (communityId: string, postId: string, minutes: number, author = 'u-ana') =>
    postEvent({ postId, communityId, communityName: 'Club', author, createdAt: minute(minutes) });
  const change = (communityId: string, kind: 'join' | 'leave', userId: string, minutes: number) =>
    membershipEvent(kind, [userId], communityId, minute(minutes));
  /** The community's post records of everyone the scenarios involve, by user. */
  const trayOf = async (communityId: string) => {
    const users = ['u-ana', 'u-ben', 'u-cid', 'u-dee', 'u-eve'];
    const found = await Promise.all(users.map((userId) => worker.record(`post_${communityId}_${userId}`)));
    const records = found.filter((record): record is TrayRecord => record !== null);
    return records.map((record) => JSON.parse(JSON.stringify(visible(record)).replaceAll(communityId, 'c')));
  };
  const lastPost = async (communityId: string, userId: string) =>
    (await worker.record(`post_${communityId}_${userId}`))?.lastActionId;

  describe('posts and joins delivered in reversed order', () => {
    // Ben a member throughout; Cid leaves at 15 and rejoins at 25; Dee joins at 12.
    const scenario = (communityId: string): TestEnvelope[] => [
      change(communityId, 'join', 'u-ben', 0),
      change(communityId, 'join', 'u-cid', 0),
      post(communityId, `${communityId}-p5`, 5),
      post(communityId, `${communityId}-p10`, 10),
      change(communityId, 'join', 'u-dee', 12),
      post(communityId, `${communityId}-p14`, 14, 'u-eve'),
      change(communityId, 'leave', 'u-cid', 15),
      post(communityId, `${communityId}-p20`, 20),
      change(communityId, 'join', 'u-cid', 25),
      post(communityId, `${communityId}-p30`, 30, 'u-eve'),
    ];

    it('give the same trays as in order', async () => {
      for (const event of scenario('c-fwd')) await worker.deliver(event);
      for (const event of scenario('c-rev').reverse()) await worker.deliver(event);
      const inOrder = await trayOf('c-fwd');
      expect(inOrder.map((record) => [record.userId, record.lastActionId])).to.deep.equal([
        ['u-ben', 'c-p30'],
        ['u-cid', 'c-p30'],
        ['u-dee', 'c-p30'],
      ]);
      expect(await trayOf('c-rev')).to.deep.equal(inOrder);
    });
  });

  describe('a join delivered after the posts it precedes', () => {
    it('adds those posts to the member’s tray, and a redelivery adds nothing twice', async () => {
      await worker.deliver(post('c-late', 'p-l1', 5));
      await worker.deliver(post('c-late', 'p-l2', 6, 'u-eve'));
      await worker.deliver(post('c-late', 'p-l0', 1));
      expect(await worker.record('post_c-late_u-fay')).to.equal(null);
      await worker.deliver(change('c-late', 'join', 'u-fay', 2));
      const record = await worker.record('post_c-late_u-fay');
      expect(record).to.deep.include({
        lastActionId: 'p-l2',
        actorsCount: 2,
      });
      expect(record?.actors.map((actor) => actor.name)).to.deep.equal(['Eve', 'Ana']);
      await worker.deliver(change('c-late', 'join', 'u-fay', 2));
      expect(await worker.record('post_c-late_u-fay')).to.deep.equal(record);
    });

    it('reaches posts of earlier days, one day of stored events at a time', async () => {
      const day = 24 * 60;
      await worker.deliver(post('c-days', 'p-d3', -3 * day));
      await worker.deliver(post('c-days', 'p-d2', -2 * day + 5, 'u-eve'));
      await worker.deliver(change('c-days', 'join', 'u-kay', -4 * day));
      const record = await worker.record('post_c-days_u-kay');
      expect([record?.lastActionId, record?.actorsCount]).to.deep.equal(['p-d2', 2]);
    });

    it('adds only the posts of the span it opened, not those after a leave already stored', async () => {
      await worker.deliver(post('c-span', 'p-s1', 5));
      await worker.deliver(post('c-span', 'p-s2', 15));
      await worker.deliver(change('c-span', 'leave', 'u-gus', 10));
      await worker.deliver(change('c-span', 'join', 'u-gus', 1));
      expect(await lastPost('c-span', 'u-gus')).to.equal('p-s1');
    });
  });

  describe('a leave delivered late', () => {
    it('takes back nothing already made for what came after it, and stops what comes next', async () => {
      await worker.deliver(change('c-gone', 'join', 'u-hal', 0));
      await worker.deliver(post('c-gone', 'p-g1', 5));
      await worker.deliver(post('c-gone', 'p-g2', 20, 'u-eve'));
      const made = await worker.record('post_c-gone_u-hal');
      expect(made).to.deep.include({ lastActionId: 'p-g2', actorsCount: 2 });
      await worker.deliver(change('c-gone', 'leave', 'u-hal', 10));
      expect(await worker.record('post_c-gone_u-hal')).to.deep.equal(made);
      await worker.deliver(post('c-gone', 'p-g3', 25));
      expect(await worker.record('post_c-gone_u-hal')).to.deep.equal(made);
    });

    it('leaves every record of the community’s targets as it was: the post record and a comment on the member’s own post', async () => {
      const records = async () =>
        (await Promise.all(['post_c-lag_u-eve', 'comment_p-eve_u-eve'].map((key) => worker.record(key)))).map(
          (record) => record && visible(record),
        );
      await worker.deliver(membershipEvent('join', ['u-eve', 'u-ana', 'u-ben'], 'c-lag', minute(0)));
      await worker.deliver(post('c-lag', 'p-lag1', 10, 'u-ana'));
      await worker.deliver(post('c-lag', 'p-lag2', 30, 'u-ben'));
      await worker.deliver(
        commentEvent({
          commentId: 'cm-eve',
          author: 'u-ben',
          postOwner: 'u-eve',
          postId: 'p-eve',
          communityId: 'c-lag',
          communityName: 'Lag Club',
          createdAt: minute(31),
        }),
      );
      const before = await records();
      expect(before.map((record) => record?.actorsCount)).to.deep.equal([2, 1]);
      // Eve left at minute 20; the leave is processed only now.
      await worker.deliver(change('c-lag', 'leave', 'u-eve', 20));
      expect(await records()).to.deep.equal(before);
    });
  });

  describe('comments on a member’s post while they are away from the community', () => {
    const comment = (commentId: string, minutes: number, author: string, feed: 'community' | 'user') =>
      commentEvent({
        commentId,
        author,
        postOwner: 'u-ola',
        postId: `p-ola-${feed}`,
        communityId: 'c-away',
        feed,
        createdAt: minute(minutes),
      });

    it('reach nothing once the leave is processed; one processed before a late leave stays; on the owner’s own feed nothing changes', async () => {
      await worker.deliver(change('c-away', 'join', 'u-ola', 0));
      await worker.deliver(comment('cm-a1', 5, 'u-ben', 'community'));
      await worker.deliver(comment('cm-a2', 15, 'u-cid', 'community'));
      await worker.deliver(comment('cm-u2', 15, 'u-cid', 'user'));
      await worker.deliver(change('c-away', 'leave', 'u-ola', 10));
      await worker.deliver(comment('cm-a4', 17, 'u-fay', 'community'));
      await worker.deliver(change('c-away', 'join', 'u-ola', 20));
      await worker.deliver(comment('cm-a3', 25, 'u-dee', 'community'));
      const names = (record: TrayRecord | null) => record?.actors.map((actor) => actor.userId);
      const inCommunity = await worker.record('comment_p-ola-community_u-ola');
      expect(names(inCommunity)).to.deep.equal(['u-dee', 'u-cid', 'u-ben']);
      expect(inCommunity?.actorsCount).to.equal(3);
      expect(names(await worker.record('comment_p-ola-user_u-ola'))).to.deep.equal(['u-cid']);
    });
  });

  describe('leave and rejoin within a minute', () => {
    const seconds = (s: number) => minute(100 + s / 60);

    it('with createdAt: updates stop while away and resume after the rejoin', async () => {
      const at = (s: number) => membershipEvent('join', ['u-ivy'], 'c-min', seconds(s));
      await worker.deliver(at(0));
      await worker.deliver(membershipEvent('leave', ['u-ivy'], 'c-min', seconds(20)));
      await worker.deliver(at(40));
      await worker.deliver(post('c-min', 'p-m1', 100 + 10 / 60));
      await worker.deliver(post('c-min', 'p-m2', 100 + 30 / 60, 'u-eve'));
      expect(await lastPost('c-min', 'u-ivy')).to.equal('p-m1');
      await worker.deliver(post('c-min', 'p-m3', 100 + 50 / 60));
      const record = await worker.record('post_c-min_u-ivy');
      expect(record?.lastActionId).to.equal('p-m3');
    });

    it('without createdAt: each change counts from its receipt, a byte-identical rejoin included', async () => {
      const join = membershipEvent('join', ['u-joy'], 'c-nts');
      await worker.deliver(join, { receivedAt: seconds(0) });
      await worker.deliver(membershipEvent('leave', ['u-joy'], 'c-nts'), { receivedAt: seconds(20) });
      await worker.deliver(post('c-nts', 'p-n1', 100 + 30 / 60));
      expect(await lastPost('c-nts', 'u-joy')).to.equal(undefined);
      await worker.deliver(join, { receivedAt: seconds(40) });
      await worker.deliver(post('c-nts', 'p-n2', 100 + 50 / 60));
      expect(await lastPost('c-nts', 'u-joy')).to.equal('p-n2');
    });
  });

  describe('with the worker running 8 jobs at once', () => {
    const racing = useWorker({ concurrency: 8 });
    const racePost = (postId: string, minutes: number, author: string) =>
      postEvent({ postId, communityId: 'c-race', communityName: 'Race', author, createdAt: minute(minutes) });

    it('stores one member’s joins and leaves processed concurrently as the same intervals', async () => {
      await racing.deliverAll([
        membershipEvent('leave', ['u-kim'], 'c-race', minute(30)),
        membershipEvent('join', ['u-kim'], 'c-race', minute(20)),
        membershipEvent('join', ['u-kim'], 'c-race', minute(0)),
        membershipEvent('join', ['u-kim'], 'c-race', minute(40)),
        membershipEvent('leave', ['u-kim'], 'c-race', minute(10)),
      ]);
      await racing.deliver(racePost('p-k32', 32, 'u-ana'));
      expect(await racing.record('post_c-race_u-kim')).to.equal(null);
      await racing.deliver(racePost('p-k22', 22, 'u-ana'));
      await racing.deliver(racePost('p-k12', 12, 'u-eve'));
      await racing.deliver(racePost('p-k45', 45, 'u-ben'));
      const record = await racing.record('post_c-race_u-kim');
      expect([record?.lastActionId, record?.actors.map((actor) => actor.name)]).to.deep.equal([
        'p-k45',
        ['Ben', 'Ana'],
      ]);
    });

    it('gives a post processed together with the joins before it to every one of those members', async () => {
      const members = Array.from({ length: 20 }, (_, n) => `u-m${n}`);
      await racing.deliverAll([
        racePost('p-k100', 100, 'u-ana'),
        ...members.map((userId) => membershipEvent('join', [userId], 'c-race', minute(90))),
      ]);
      const reached = await Promise.all(members.map((userId) => racing.record(`post_c-race_${userId}`)));
      expect(reached.map((record) => record?.lastActionId)).to.deep.equal(members.map(() => 'p-k100'));
    });
  });
});

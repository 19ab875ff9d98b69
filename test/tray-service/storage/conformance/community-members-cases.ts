import { expect } from 'chai';
import { aComment, aPost } from '../../../support/activity-builder.ts';
import { applyOperation } from './apply-operation.ts';
import { at, NOW } from './case-fixtures.ts';
import { conformanceCase } from './conformance-case.ts';

/** Who a community had as members at a time (CommunityMembersPort): the users a post created then reached. */

conformanceCase(
  'community members: a post no longer kept reached its members at its time, the author left out, in id order, paged, counted',
  async ({ storage, id, write }) => {
    const communityId = id('c-hike');
    const join = (user: string, active: boolean, minute: number) =>
      storage.writes.applyMemberships(
        [{ communityId, userId: id(user), active, at: at(minute) }],
        write(NOW),
      );
    for (const user of ['eve', 'ana', 'dan', 'cid', 'ben']) await join(user, true, 0);
    await join('dan', false, 4);
    await join('fay', true, 6);
    // Never delivered, so without a kept place: judged as processed after every change.
    const post = aPost(id('ben'), { id: id('p-1'), at: at(5), communityId });
    const members = storage.communityMembers;
    const page = (after?: string, limit = 10) =>
      members.postRecipients(communityId, post, { limit, ...(after === undefined ? {} : { after }) });
    expect(await page()).to.deep.equal({ userIds: [id('ana'), id('cid'), id('eve')] });
    const first = await page(undefined, 2);
    expect(first).to.deep.equal({ userIds: [id('ana'), id('cid')], next: id('cid') });
    expect(await page(first.next, 2)).to.deep.equal({ userIds: [id('eve')] });
    expect(await members.countPostRecipients(communityId, post)).to.equal(3);
    expect(await members.countPostRecipients(id('c-none'), post)).to.equal(0);
    expect(
      await members.reachedAmong(communityId, post, [id('ana'), id('ben'), id('dan'), id('fay'), id('zed')]),
    ).to.deep.equal(new Set([id('ana')]));
    expect(await members.reachedAmong(communityId, post, [])).to.deep.equal(new Set());
    const later = aPost(id('ben'), { id: id('p-2'), at: at(7), communityId });
    expect(await members.reachedAmong(communityId, later, [id('fay')])).to.deep.equal(new Set([id('fay')]));
  },
);

conformanceCase(
  'community members: at a post’s time they are exactly the users whose tray the post reached',
  async ({ storage, id, write }) => {
    const communityId = id('c-run');
    const users = ['a', 'b', 'c', 'd', 'e', 'f'].map((name) => id(name));
    for (const [index, userId] of users.entries()) {
      await storage.writes.applyMemberships(
        [{ communityId, userId, active: true, at: at(index) }],
        write(NOW),
      );
    }
    await storage.writes.applyMemberships(
      [{ communityId, userId: users[1]!, active: false, at: at(2) }],
      write(NOW),
    );
    const post = aPost(users[0]!, { id: id('p-1'), at: at(3, 500), communityId });
    await applyOperation(storage, { kind: 'posts', communityId, posts: [post], now: NOW }, write);
    const reached: string[] = [];
    for (const userId of users) {
      const { records } = await storage.records.pageAfter(userId, undefined, 10, NOW);
      if (records.some((record) => record.verb === 'post')) reached.push(userId);
    }
    const { userIds } = await storage.communityMembers.postRecipients(communityId, post, { limit: 10 });
    expect(userIds).to.deep.equal(reached);
    expect(reached).to.deep.equal([users[2], users[3]]);
  },
);

conformanceCase(
  'community members: away at a time are those who left and had not joined again, never a user the tray knows nothing of',
  async ({ storage, id, write }) => {
    const communityId = id('c-walk');
    const change = (user: string, active: boolean, minute: number) =>
      storage.writes.applyMemberships(
        [{ communityId, userId: id(user), active, at: at(minute) }],
        write(NOW),
      );
    await change('ana', true, 0);
    await change('ana', false, 2);
    await change('ana', true, 4);
    await change('ben', true, 0);
    await change('ben', false, 3);
    // Comments never delivered, so without a kept place: judged as processed after every change.
    const comment = (owner: string, minute: number) =>
      aComment(
        id('zed'),
        { postId: id('p-1'), owner: id(owner) },
        { id: id(`cm-${owner}-${minute}`), at: at(minute), communityId },
      );
    const away = async (minute: number) => {
      const activities = ['ana', 'ben', 'zed'].map((owner) => comment(owner, minute));
      const flags = await storage.communityMembers.notReached(activities);
      return new Set(activities.flatMap((activity, index) => (flags[index] ? [activity.audience] : [])));
    };
    const audience = (user: string) => ({ kind: 'user', userId: id(user) });
    expect(await away(1)).to.deep.equal(new Set());
    expect(await away(2)).to.deep.equal(new Set([audience('ana')]));
    expect(await away(3)).to.deep.equal(new Set([audience('ana'), audience('ben')]));
    expect(await away(4)).to.deep.equal(new Set([audience('ben')]));
    // A post's own audience is the community: never away by this rule; nor is anything on a user's feed.
    expect(
      await storage.communityMembers.notReached([
        aPost(id('zed'), { id: id('p-2'), at: at(3), communityId }),
        aComment(
          id('zed'),
          { postId: id('p-3'), owner: id('ben') },
          { id: id('cm-feed'), at: at(3), userFeed: id('ben') },
        ),
      ]),
    ).to.deep.equal([false, false]);
    expect(await storage.communityMembers.notReached([])).to.deep.equal([]);
  },
);

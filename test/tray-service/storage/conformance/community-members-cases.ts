import { expect } from 'chai';
import { aPost } from '../../../support/activity-builder.ts';
import { applyOperation } from './apply-operation.ts';
import { at, NOW } from './case-fixtures.ts';
import { conformanceCase } from './conformance-case.ts';

/** Who a community had as members at a time (CommunityMembersPort): the users a post created then reached. */

conformanceCase(
  'community members: members at a time, the author left out, in id order, paged, counted',
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
    const members = (after?: string, limit = 10) =>
      storage.communityMembers.membersAt(communityId, at(5), {
        limit,
        exclude: id('ben'),
        ...(after === undefined ? {} : { after }),
      });
    expect(await members()).to.deep.equal({ userIds: [id('ana'), id('cid'), id('eve')] });
    const first = await members(undefined, 2);
    expect(first).to.deep.equal({ userIds: [id('ana'), id('cid')], next: id('cid') });
    expect(await members(first.next, 2)).to.deep.equal({ userIds: [id('eve')] });
    expect(await storage.communityMembers.countMembersAt(communityId, at(5), id('ben'))).to.equal(3);
    expect(await storage.communityMembers.countMembersAt(communityId, at(5))).to.equal(4);
    expect(await storage.communityMembers.countMembersAt(id('c-none'), at(5))).to.equal(0);
    expect(
      await storage.communityMembers.membersAmong(communityId, at(5), [
        id('ana'),
        id('dan'),
        id('fay'),
        id('zed'),
      ]),
    ).to.deep.equal(new Set([id('ana')]));
    expect(await storage.communityMembers.membersAmong(communityId, at(7), [id('fay')])).to.deep.equal(
      new Set([id('fay')]),
    );
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
    const { userIds } = await storage.communityMembers.membersAt(communityId, post.at, {
      limit: 10,
      exclude: users[0]!,
    });
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
    const away = (minute: number) =>
      storage.communityMembers.awayAmong(communityId, at(minute), [id('ana'), id('ben'), id('zed')]);
    expect(await away(1)).to.deep.equal(new Set());
    expect(await away(2)).to.deep.equal(new Set([id('ana')]));
    expect(await away(3)).to.deep.equal(new Set([id('ana'), id('ben')]));
    expect(await away(4)).to.deep.equal(new Set([id('ben')]));
    expect(await storage.communityMembers.awayAmong(communityId, at(3), [])).to.deep.equal(new Set());
  },
);

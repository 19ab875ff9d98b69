import { expect } from 'chai';
import { deletedActor, showsDeleted, withDeletedActors } from '../../../tray-service/domain/deleted-user.ts';
import { aComment } from '../../support/activity-builder.ts';

describe('deleted users (docs/tray-rules.md#deleted-users)', () => {
  const post = { postId: 'p-1', owner: 'u-ana' };
  const ben = aComment('u-ben', post, { id: 'cm-1', at: 1, name: 'Ben', imageUrl: 'https://img/ben' });
  const cid = aComment('u-cid', post, { id: 'cm-2', at: 2, name: 'Cid', imageUrl: 'https://img/cid' });

  it('shows a deleted user as `Deleted user`, without image or custom avatar, marked deleted', () => {
    expect(deletedActor('u-ben')).to.deep.equal({ userId: 'u-ben', name: 'Deleted user', deleted: true });
  });

  it('rewrites the actor of a deleted user’s activity only, keeping everything else', () => {
    expect(withDeletedActors([ben, cid], new Set(['u-ben']))).to.deep.equal([
      { ...ben, actor: { userId: 'u-ben', name: 'Deleted user', deleted: true } },
      cid,
    ]);
  });

  it('leaves the activities as they are when none of their actors is deleted', () => {
    const activities = [ben, cid];
    expect(withDeletedActors(activities, new Set(['u-ana']))).to.equal(activities);
    expect(withDeletedActors(activities, new Set())).to.equal(activities);
  });

  it('tells a snapshot shown as deleted from one that still names the user', () => {
    expect(showsDeleted(deletedActor('u-ben'))).to.equal(true);
    expect(showsDeleted({ name: 'Ben' })).to.equal(false);
    expect(showsDeleted({ name: 'Deleted user', imageUrl: 'https://img/ben' })).to.equal(false);
    expect(showsDeleted({ name: 'Deleted user', avatarCustomUrl: 'https://img/ben-custom' })).to.equal(false);
  });

  it('tells a deleted user by the mark: a live user called `Deleted user`, or a snapshot from before the mark, is not shown as deleted', () => {
    expect(showsDeleted({ name: 'Deleted user' })).to.equal(false);
    expect(showsDeleted({ name: 'Ben', deleted: true })).to.equal(false);
  });
});

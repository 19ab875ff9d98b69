import { expect } from 'chai';
import { removalVoids, voidedByAny } from '../../../tray-service/domain/removal-voids.ts';
import { activityPost } from '../../../tray-service/domain/activity-post.ts';
import {
  aComment,
  aCommentReaction,
  aMention,
  aPost,
  aReaction,
  aReply,
} from '../../support/activity-builder.ts';

const post = { postId: 'p-1', owner: 'u-ana' };
const comment = { commentId: 'cm-1', owner: 'u-ben', postId: 'p-1' };
const reply = { commentId: 'cm-2', owner: 'u-cy', postId: 'p-1' };
const on = {
  post: aPost('u-ana', { id: 'p-1', at: 1 }),
  comment: aComment('u-ben', post, { id: 'cm-1', at: 2 }),
  reply: aReply('u-cy', comment, { id: 'cm-2', at: 3 }),
  replyToReply: aReply('u-dee', reply, { id: 'cm-3', at: 4 }),
  reaction: aReaction('u-dee', post, { id: 'r-1', at: 5 }),
  commentReaction: aCommentReaction('u-eve', comment, { id: 'r-2', at: 6 }),
  replyReaction: aCommentReaction('u-eve', reply, { id: 'r-3', at: 6 }),
  mentionInPost: aMention('u-ana', 'u-fay', { in: 'post', postId: 'p-1' }, { at: 1 }),
  mentionInComment: aMention(
    'u-ben',
    'u-fay',
    { in: 'comment', commentId: 'cm-1', postId: 'p-1' },
    { at: 2 },
  ),
  mentionInReply: aMention('u-cy', 'u-fay', { in: 'comment', commentId: 'cm-2', postId: 'p-1' }, { at: 3 }),
  elsewhere: aComment('u-ben', { postId: 'p-2', owner: 'u-ana' }, { id: 'cm-9', at: 2 }),
};
type Name = keyof typeof on;
const voided = (removal: Parameters<typeof removalVoids>[0]) =>
  (Object.keys(on) as Name[]).filter((name) => removalVoids(removal, on[name]));

describe('removalVoids (docs/tray-rules.md#inbox)', () => {
  it('names the post of every kind of action', () => {
    expect(Object.values(on).map(activityPost)).to.deep.equal([...Array(10).fill('p-1'), 'p-2']);
  });

  it('a deleted post voids everything on it and its comments, nothing of another post', () => {
    expect(voided({ kind: 'post', id: 'p-1' })).to.deep.equal(
      Object.keys(on).filter((n) => n !== 'elsewhere'),
    );
  });

  it('a deleted comment voids itself, replies and reactions to it and mentions in it; not the replies own records', () => {
    expect(voided({ kind: 'comment', id: 'cm-1' })).to.deep.equal([
      'comment',
      'reply',
      'commentReaction',
      'mentionInComment',
    ]);
  });

  it('a deleted reply voids its own action, what is on it, not its parent', () => {
    expect(voided({ kind: 'comment', id: 'cm-2' })).to.deep.equal([
      'reply',
      'replyToReply',
      'replyReaction',
      'mentionInReply',
    ]);
  });

  it('a removed reaction voids that reaction only, on a post or a comment', () => {
    expect(voided({ kind: 'reaction', id: 'r-1' })).to.deep.equal(['reaction']);
    expect(voided({ kind: 'reaction', id: 'r-2' })).to.deep.equal(['commentReaction']);
  });

  it('never confuses kinds that share an id', () => {
    expect(voided({ kind: 'reaction', id: 'cm-1' })).to.deep.equal([]);
    expect(voided({ kind: 'comment', id: 'r-1' })).to.deep.equal([]);
    expect(
      voidedByAny(
        [
          { kind: 'reaction', id: 'x' },
          { kind: 'comment', id: 'cm-1' },
        ],
        on.comment,
      ),
    ).to.equal(true);
    expect(voidedByAny([], on.comment)).to.equal(false);
  });
});

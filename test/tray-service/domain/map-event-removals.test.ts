import { expect } from 'chai';
import { mapEvent } from '../../../tray-service/domain/map-event.ts';
import { commentDeleteEvent, minute, postDeleteEvent, reactionRemoveEvent } from '../worker/event-builder.ts';

// Received now: the events are dated a day before the run (minute()), and a date past its receipt
// would count from the receipt.
const receivedAt = Date.now();

describe('mapEvent: removal events (docs/tray-rules.md#inbox)', () => {
  it('maps post.didDelete to a post tombstone dated deletedAt, with its author and community', () => {
    const mapped = mapEvent({ ...postDeleteEvent({ deletedAt: minute(40) }), receivedAt });
    expect(mapped).to.deep.include({
      status: 'applied',
      activities: [],
      removals: [
        { kind: 'post', id: 'p-100', postId: 'p-100', at: Date.parse(minute(40)), communityId: 'c-hike' },
      ],
      subject: { userId: 'u-ana', communityId: 'c-hike' },
    });
  });

  it('maps a post deleted on a user feed without a community', () => {
    const mapped = mapEvent({ ...postDeleteEvent({ feed: 'user' }), receivedAt });
    expect([mapped.status, mapped.subject]).to.deep.equal(['applied', { userId: 'u-ana' }]);
    expect(mapped.removals?.[0]).not.to.have.property('communityId');
  });

  it('maps comment.didDelete (a comment or a reply) to a comment tombstone on its post', () => {
    for (const envelope of [
      commentDeleteEvent(),
      commentDeleteEvent({ commentId: 'cm-8', parent: { commentId: 'cm-7', userId: 'u-cid' } }),
    ]) {
      const mapped = mapEvent({ ...envelope, receivedAt });
      const comment = envelope.data.comment as { commentId: string };
      expect(mapped.removals).to.deep.equal([
        { kind: 'comment', id: comment.commentId, postId: 'p-100', at: Date.parse(minute(31)) },
      ]);
    }
  });

  it('maps reaction.didRemove to a reaction tombstone dated removedAt', () => {
    expect(mapEvent({ ...reactionRemoveEvent(), receivedAt }).removals).to.deep.equal([
      { kind: 'reaction', id: 'r-9', postId: 'p-100', at: Date.parse(minute(32)) },
    ]);
  });

  // As their creations are: a deletion naming another post than its comment's or reaction's was
  // stored as applied, and removed nothing (the tombstone is looked up by that post).
  it('reports a removal whose payload names two different posts or communities as invalid', () => {
    const comment = commentDeleteEvent();
    (comment.data.comment as { referenceId: string }).referenceId = 'p-other';
    expect(mapEvent({ ...comment, receivedAt })).to.deep.include({ status: 'invalid' });
    expect(mapEvent({ ...comment, receivedAt }).error).to.match(/^data\.comment\.referenceId: /);

    const onPost = reactionRemoveEvent();
    (onPost.data.reaction as { referenceId: string }).referenceId = 'p-other';
    expect(mapEvent({ ...onPost, receivedAt }).error).to.match(/^data\.reaction\.referenceId: /);

    const post = postDeleteEvent();
    // A copy: the builder's community object is shared by every event it builds.
    post.data.community = { ...(post.data.community as object), communityId: 'c-other' };
    expect(mapEvent({ ...post, receivedAt }).error).to.match(/^data\.community\.communityId: /);
  });

  it('reports a removal without its time as invalid', () => {
    const undated = postDeleteEvent();
    delete undated.data.deletedAt;
    expect(mapEvent({ ...undated, receivedAt }).error).to.match(/^data\.deletedAt: /);
  });

  // Refused before, over fields a tombstone never reads: the deleted reply or reaction then stayed
  // in every tray it had reached.
  it('takes a reply’s deletion without its parent comment, and a comment reaction’s without its comment', () => {
    const orphan = commentDeleteEvent({ commentId: 'cm-8', parent: { commentId: 'cm-7', userId: 'u-cid' } });
    orphan.data.parentComment = null;
    expect(mapEvent({ ...orphan, receivedAt })).to.deep.include({
      status: 'applied',
      removals: [{ kind: 'comment', id: 'cm-8', postId: 'p-100', at: Date.parse(minute(31)) }],
    });
    const loose = reactionRemoveEvent({ comment: { commentId: 'cm-7', userId: 'u-cid' } });
    delete loose.data.comment;
    expect(mapEvent({ ...loose, receivedAt })).to.deep.include({
      status: 'applied',
      removals: [{ kind: 'reaction', id: 'r-9', postId: 'p-100', at: Date.parse(minute(32)) }],
    });
  });
});

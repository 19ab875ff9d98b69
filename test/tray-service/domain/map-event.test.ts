import { expect } from 'chai';
import { mapEvent } from '../../../tray-service/domain/map-event.ts';
import {
  commentEvent,
  membershipEvent,
  postEvent,
  reactionEvent,
  userDeleteEvent,
  userUpdateEvent,
} from '../worker/event-builder.ts';

const receivedAt = Date.parse('2026-11-20T12:00:00.000Z');

// The mapping alone (no I/O): statuses and the activities each event yields.
describe('mapEvent', () => {
  it('maps a community post with a mention to a fan-out and one mention', () => {
    const mapped = mapEvent({ ...postEvent({ mentions: ['u-ben', 'u-ben'] }), receivedAt });
    expect(mapped.status).to.equal('applied');
    expect(mapped.activities.map((a) => [a.verb, a.audience])).to.deep.equal([
      ['post', { kind: 'community', communityId: 'c-hike' }],
      ['mention', { kind: 'user', userId: 'u-ben' }],
    ]);
  });

  it('maps a post on a user feed to mentions only (docs/contract.md#postdidcreate)', () => {
    expect(mapEvent({ ...postEvent({ feed: 'user' }), receivedAt }).activities).to.deep.equal([]);
  });

  it('dates joins and leaves with their createdAt', () => {
    const createdAt = '2026-11-20T09:30:00.000Z';
    expect(
      mapEvent({ ...membershipEvent('join', ['u-eve'], 'c-hike', createdAt), receivedAt }).memberships,
    ).to.deep.equal([{ communityId: 'c-hike', userId: 'u-eve', active: true, at: Date.parse(createdAt) }]);
  });

  it('dates joins and leaves without createdAt with the receive time', () => {
    expect(mapEvent({ ...membershipEvent('leave', ['u-eve']), receivedAt }).memberships).to.deep.equal([
      { communityId: 'c-hike', userId: 'u-eve', active: false, at: receivedAt },
    ]);
  });

  it('reports a join whose createdAt is not an ISO time as invalid', () => {
    const mapped = mapEvent({ ...membershipEvent('join', ['u-eve'], 'c-hike', 'soon'), receivedAt });
    expect([mapped.status, mapped.memberships]).to.deep.equal(['invalid', []]);
    expect(mapped.error).to.match(/^data\.createdAt: /);
  });

  describe('a blank name (empty, or spaces only) counts as missing: the id stands in', () => {
    const blank = {
      users: [
        { userId: 'u-cid', displayName: '' },
        { userId: 'u-ana', displayName: '  ' },
      ],
    };

    it('for the actor and the community of a comment', () => {
      const [activity] = mapEvent({
        ...commentEvent({ ...blank, communityName: ' ' }),
        receivedAt,
      }).activities;
      expect(activity?.actor.name).to.equal('u-cid');
      expect([activity?.feed.name, activity?.targetName]).to.deep.equal(['c-hike', 'c-hike']);
    });

    it('for the owner of a user feed, who names the feed', () => {
      const [activity] = mapEvent({ ...commentEvent({ ...blank, feed: 'user' }), receivedAt }).activities;
      expect([activity?.feed.name, activity?.targetName]).to.deep.equal(['u-ana', 'u-ana']);
    });
  });

  describe('a name left out, or sent as null, counts as missing too: the event is kept', () => {
    it('for the actor, a mentioned user and the community of a comment', () => {
      const event = commentEvent({ mentions: ['u-ben'] });
      event.data.users = [{ userId: 'u-cid', displayName: null }, { userId: 'u-ben' }];
      (event.data.community as Record<string, unknown>).displayName = null;
      const mapped = mapEvent({ ...event, receivedAt });
      expect(mapped.status, mapped.error).to.equal('applied');
      const [comment, mention] = mapped.activities;
      expect([comment?.actor.name, comment?.feed.name]).to.deep.equal(['u-cid', 'c-hike']);
      expect([mention?.verb, mention?.audience]).to.deep.equal([
        'mention',
        { kind: 'user', userId: 'u-ben' },
      ]);
    });

    it('for the owner of a user feed', () => {
      const event = commentEvent({ feed: 'user' });
      event.data.users = [
        { userId: 'u-cid', displayName: 'Cid' },
        { userId: 'u-ana', displayName: null },
      ];
      const [activity] = mapEvent({ ...event, receivedAt }).activities;
      expect(activity?.feed.name).to.equal('u-ana');
    });

    it('for a profile update, which names the user by id from then on', () => {
      for (const displayName of [null, undefined, '', ' ']) {
        const event = userUpdateEvent({ userId: 'u-kim', displayName: 'Kim' });
        event.data.users = [{ userId: 'u-kim', displayName }];
        const mapped = mapEvent({ ...event, receivedAt });
        expect(mapped.status, String(displayName)).to.equal('applied');
        expect(mapped.profiles.map((profile) => profile.displayName)).to.deep.equal(['u-kim']);
      }
    });
  });

  describe('mentionees of other types than user', () => {
    it('are left out, whatever they carry, and the users are mentioned', () => {
      const event = postEvent({ mentions: ['u-ben'] });
      const post = event.data.post as Record<string, unknown>;
      post.mentionees = [
        { type: 'channel' },
        { type: 'role', roleIds: ['r-1'] },
        { type: 'everyone', userIds: null },
        { type: 'user', userIds: ['u-ben'] },
      ];
      const mapped = mapEvent({ ...event, receivedAt });
      expect(mapped.status, mapped.error).to.equal('applied');
      expect(mapped.activities.map((a) => [a.verb, a.audience])).to.deep.equal([
        ['post', { kind: 'community', communityId: 'c-hike' }],
        ['mention', { kind: 'user', userId: 'u-ben' }],
      ]);
    });

    it('do not excuse a user entry without its user ids: invalid, naming the entry', () => {
      const event = postEvent();
      (event.data.post as Record<string, unknown>).mentionees = [{ type: 'user' }];
      const mapped = mapEvent({ ...event, receivedAt });
      expect(mapped.status).to.equal('invalid');
      expect(mapped.error).to.match(/^data\.post\.mentionees\.0/);
    });
  });

  // Storage keeps a user's newest profile by this time: dated by receipt, a platform's late retry
  // of an older rename would win over the newer one. Its createdAt, when sent, orders them (the
  // receiver already treats such an update as dated: it dedupes it by body).
  it('dates a profile update with its createdAt when it has one, else with the receive time', () => {
    const update = userUpdateEvent({ userId: 'u-ana', displayName: 'Ana B' });
    expect(mapEvent({ ...update, receivedAt }).profiles.map((profile) => profile.at)).to.deep.equal([
      receivedAt,
    ]);
    const createdAt = '2026-11-20T11:00:00.000Z';
    const dated = { ...update, data: { ...update.data, createdAt } };
    expect(mapEvent({ ...dated, receivedAt }).profiles.map((profile) => profile.at)).to.deep.equal([
      Date.parse(createdAt),
    ]);
    const farAhead = { ...update, data: { ...update.data, createdAt: '2099-01-01T00:00:00.000Z' } };
    expect(mapEvent({ ...farAhead, receivedAt }).profiles.map((profile) => profile.at)).to.deep.equal([
      receivedAt,
    ]);
    const undated = { ...update, data: { ...update.data, createdAt: 'soon' } };
    expect(mapEvent({ ...undated, receivedAt }).status).to.equal('invalid');
  });

  it('names a deleted user `Deleted user`', () => {
    expect(mapEvent({ ...userDeleteEvent('u-ivy'), receivedAt }).profiles).to.deep.equal([
      { userId: 'u-ivy', displayName: 'Deleted user', deleted: true, at: receivedAt },
    ]);
  });

  it('reports an unknown name as `unknown` and a bad payload as `invalid` with the path', () => {
    expect(mapEvent({ event: 'poll.didVote', data: {}, receivedAt }).status).to.equal('unknown');
    const bad = commentEvent();
    (bad.data.comment as Record<string, unknown>).createdAt = 'yesterday';
    const mapped = mapEvent({ ...bad, receivedAt });
    expect(mapped.status).to.equal('invalid');
    expect(mapped.error).to.match(/^data\.comment\.createdAt: /);
  });

  // The recipient of a reply or a comment's reaction is read from parentComment or comment: one
  // naming another comment than the one acted on would notify its author of someone else's.
  it('reports a reply, or a comment reaction, whose comment is not the one it names as invalid', () => {
    const reply = commentEvent({ commentId: 'cm-8', parent: { commentId: 'cm-7', userId: 'u-cid' } });
    reply.data.parentComment = { commentId: 'cm-9', userId: 'u-zed' };
    expect(mapEvent({ ...reply, receivedAt })).to.deep.include({
      status: 'invalid',
      error: 'data.parentComment.commentId: expected the comment comment.parentId names',
      activities: [],
    });
    const reaction = reactionEvent({ comment: { commentId: 'cm-7', userId: 'u-cid' } });
    (reaction.data.comment as Record<string, unknown>).commentId = 'cm-9';
    expect(mapEvent({ ...reaction, receivedAt })).to.deep.include({
      status: 'invalid',
      error: 'data.comment.commentId: expected the comment reaction.referenceId names',
      activities: [],
    });
  });

  // The community's members are the audience and the post the target: a payload whose community,
  // or whose comment or reaction, names another one than the post would notify other people.
  it('reports a post whose community is not the one post.targetId names as invalid, notifying nobody', () => {
    const envelope = postEvent();
    (envelope.data.community as Record<string, unknown>).communityId = 'c-other';
    expect(mapEvent({ ...envelope, receivedAt })).to.deep.include({
      status: 'invalid',
      error: 'data.community.communityId: expected the community post.targetId names',
      activities: [],
    });
    const comment = commentEvent();
    (comment.data.community as Record<string, unknown>).communityId = 'c-other';
    expect(mapEvent({ ...comment, receivedAt })).to.deep.include({ status: 'invalid', activities: [] });
  });

  it('reports a comment, or a post reaction, on another post than data.post as invalid', () => {
    const comment = commentEvent();
    (comment.data.comment as Record<string, unknown>).referenceId = 'p-other';
    expect(mapEvent({ ...comment, receivedAt })).to.deep.include({
      status: 'invalid',
      error: 'data.comment.referenceId: expected the post data.post names',
      activities: [],
    });
    const reaction = reactionEvent();
    (reaction.data.reaction as Record<string, unknown>).referenceId = 'p-other';
    expect(mapEvent({ ...reaction, receivedAt })).to.deep.include({
      status: 'invalid',
      error: 'data.reaction.referenceId: expected the post data.post names',
      activities: [],
    });
    // A comment's reaction names the comment; the comment names the post.
    const onComment = reactionEvent({ comment: { commentId: 'cm-7', userId: 'u-cid' } });
    (onComment.data.comment as Record<string, unknown>).referenceId = 'p-other';
    expect(mapEvent({ ...onComment, receivedAt })).to.deep.include({
      status: 'invalid',
      error: 'data.comment.referenceId: expected the post data.post names',
      activities: [],
    });
  });

  it('reports a community post without its community as invalid', () => {
    const envelope = postEvent();
    delete envelope.data.community;
    expect(mapEvent({ ...envelope, receivedAt })).to.deep.include({
      status: 'invalid',
      error: 'data.community: required for a post in a community',
    });
  });

  // A longer id would not fit the storage's indexes (PostgreSQL's, and FerretDB's on it), and the
  // API names targets of at most 512 characters and records of at most 1,024: such a payload is
  // invalid, stored as such, and its job completes instead of failing for ever.
  it('reports an event carrying an id longer than 128 characters as invalid, naming none of its ids', () => {
    const tooLong = 'p'.repeat(129);
    const comment = mapEvent({ ...commentEvent({ postId: tooLong }), receivedAt });
    expect(comment.status).to.equal('invalid');
    expect(comment.error).to.include('data.post.postId: expected an id of at most 128 characters');
    expect(comment.subject).to.equal(undefined);
    for (const envelope of [
      membershipEvent('join', ['u-ana', 'u'.repeat(129)]),
      membershipEvent('join', ['u-ana'], 'c'.repeat(129)),
      userDeleteEvent('u'.repeat(129)),
      postEvent({ author: 'u'.repeat(129) }),
    ])
      expect(mapEvent({ ...envelope, receivedAt }).status, envelope.event).to.equal('invalid');
    const longest = mapEvent({
      ...commentEvent({ postId: 'p'.repeat(128), author: 'u'.repeat(128) }),
      receivedAt,
    });
    expect(longest.status).to.equal('applied');
  });
});

import { expect } from 'chai';
import { mapEvent } from '../../../tray-service/domain/map-event.ts';
import { banEvent } from '../bans/ban-events.ts';
import {
  commentEvent,
  membershipEvent,
  postEvent,
  reactionEvent,
  userDeleteEvent,
  userUpdateEvent,
} from '../worker/event-builder.ts';

const receivedAt = Date.parse('2026-11-20T12:00:00.000Z');
const subjectOf = (envelope: { event: string; data: Record<string, unknown> }) =>
  mapEvent({ ...envelope, receivedAt }).subject;

// The subject the admin filters find an event by (userId, communityId), stored with it.
describe('mapEvent: the event’s subject (acting user and community)', () => {
  it('is the author and the community of a community post, comment or reaction', () => {
    expect(subjectOf(postEvent({ author: 'u-ana' }))).to.deep.equal({
      userId: 'u-ana',
      communityId: 'c-hike',
    });
    expect(subjectOf(commentEvent({ author: 'u-cid' }))).to.deep.equal({
      userId: 'u-cid',
      communityId: 'c-hike',
    });
    expect(subjectOf(reactionEvent({ author: 'u-dee' }))).to.deep.equal({
      userId: 'u-dee',
      communityId: 'c-hike',
    });
  });
  it('has no community on a user feed, even for a post that notifies nobody', () => {
    const mapped = mapEvent({ ...postEvent({ author: 'u-ana', feed: 'user' }), receivedAt });
    expect(mapped.activities).to.deep.equal([]);
    expect(mapped.subject).to.deep.equal({ userId: 'u-ana' });
  });
  it('is the one user a join, leave, profile change or ban names, and nobody when it names several', () => {
    expect(subjectOf(membershipEvent('join', ['u-eve']))).to.deep.equal({
      userId: 'u-eve',
      communityId: 'c-hike',
    });
    expect(subjectOf(membershipEvent('leave', ['u-eve', 'u-fay']))).to.deep.equal({ communityId: 'c-hike' });
    expect(subjectOf(membershipEvent('join', ['u-eve', 'u-eve']))).to.deep.equal({
      userId: 'u-eve',
      communityId: 'c-hike',
    });
    expect(subjectOf(userUpdateEvent({ userId: 'u-gus' }))).to.deep.equal({ userId: 'u-gus' });
    expect(subjectOf(userDeleteEvent('u-ivy'))).to.deep.equal({ userId: 'u-ivy' });
    expect(subjectOf(banEvent('ban', ['u-a', 'u-b'], '2026-11-20T10:00:00.000Z'))).to.deep.equal({});
  });
  it('is absent for events the mapping does not read', () => {
    expect(subjectOf({ event: 'channel.didCreate', data: {} })).to.equal(undefined);
    expect(subjectOf({ event: 'no.such', data: {} })).to.equal(undefined);
    expect(subjectOf({ event: 'post.didCreate', data: {} })).to.equal(undefined);
  });
});

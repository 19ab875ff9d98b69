import { expect } from 'chai';
import fc from 'fast-check';
import { mapEvent } from '../../../tray-service/domain/map-event.ts';
import { compareCodePoints } from '../../../tray-service/domain/code-point-order.ts';
import { byteOrder } from '../../support/reference-tray/byte-order.ts';
import {
  mutesByOwner,
  recipientMuteTargets,
  recipientSources,
  recipientsPage,
} from '../../../tray-service/domain/event-recipients.ts';
import type { Mute, MuteTargetType } from '../../../tray-service/domain/mute.ts';
import { commentEvent, minute, postEvent } from '../worker/event-builder.ts';

// Received now: the events are dated a day before the run (minute()), and a date past its receipt
// would count from the receipt.
const receivedAt = Date.now();

describe('an event’s recipients (pure part)', () => {
  it('takes the personal audiences, the actor’s own left out, and a community post’s community, time and author', () => {
    const post = mapEvent({
      ...postEvent({ author: 'u-ana', mentions: ['u-eve', 'u-ana', 'u-ben'], createdAt: minute(5) }),
      receivedAt,
    });
    expect(recipientSources(post)).to.deep.equal({
      personal: ['u-ben', 'u-eve'],
      community: {
        communityId: 'c-hike',
        at: Date.parse(minute(5)),
        authorId: 'u-ana',
        post: post.activities[0],
      },
    });
    const ownPost = mapEvent({ ...commentEvent({ author: 'u-ana', postOwner: 'u-ana' }), receivedAt });
    expect(recipientSources(ownPost)).to.deep.equal({ personal: [] });
    // On a user's feed the community's memberships do not matter.
    const onFeed = mapEvent({ ...commentEvent({ feed: 'user', createdAt: minute(6) }), receivedAt });
    expect(recipientSources(onFeed)).to.deep.equal({ personal: ['u-ana'] });
    const inCommunity = mapEvent({ ...commentEvent({ createdAt: minute(6) }), receivedAt });
    expect(recipientSources(inCommunity)).to.deep.equal({ personal: ['u-ana'] });
  });

  it('leaves out a personal recipient away from the community for every activity addressed to them', () => {
    const comment = mapEvent({
      ...commentEvent({
        author: 'u-cid',
        postOwner: 'u-ana',
        createdAt: minute(5),
        mentions: ['u-ana', 'u-ben'],
      }),
      receivedAt,
    });
    const addressed = comment.activities.map((activity) =>
      activity.audience.kind === 'user' ? activity.audience.userId : undefined,
    );
    // Away for the comment on her post alone, Ana still got the mention; Ben, away for his, got nothing.
    const awayFor = (pairs: readonly [string, string][]) =>
      comment.activities.map((activity, index) =>
        pairs.some(([userId, verb]) => addressed[index] === userId && activity.verb === verb),
      );
    const personalIfAway = (...pairs: [string, string][]) =>
      recipientSources(comment, new Map(), awayFor(pairs)).personal;
    expect(personalIfAway(['u-ana', 'comment'])).to.deep.equal(['u-ana', 'u-ben']);
    expect(personalIfAway(['u-ana', 'comment'], ['u-ben', 'mention'])).to.deep.equal(['u-ana']);
    expect(personalIfAway(['u-ana', 'comment'], ['u-ana', 'mention'])).to.deep.equal(['u-ben']);
  });

  it('leaves out a personal recipient whose mute in force at the action’s time held back all they would get', () => {
    const comment = mapEvent({
      ...commentEvent({ author: 'u-cid', createdAt: minute(5), mentions: ['u-ana', 'u-ben', 'u-dee'] }),
      receivedAt,
    });
    expect(recipientMuteTargets(comment)).to.deep.equal([
      { targetType: 'user', targetId: 'u-cid' },
      { targetType: 'post', targetId: 'p-100' },
      { targetType: 'community', targetId: 'c-hike' },
    ]);
    const span = (userId: string, targetType: MuteTargetType, targetId: string, from: number): Mute => ({
      userId,
      targetType,
      targetId,
      createdAt: Date.parse(minute(from)),
      until: null,
      removedAt: null,
    });
    const mutes = mutesByOwner([
      // Ana's comment record is held back, her mention is not: she stays.
      span('u-ana', 'post', 'p-100', 4),
      // Put after the comment: no effect on it.
      span('u-ben', 'user', 'u-cid', 6),
      // A user mute holds back the actor's mentions too.
      span('u-dee', 'user', 'u-cid', 4),
    ]);
    expect(recipientSources(comment, mutes).personal).to.deep.equal(['u-ana', 'u-ben']);
    const unmentioned = mapEvent({ ...commentEvent({ author: 'u-cid', createdAt: minute(5) }), receivedAt });
    expect(recipientSources(unmentioned, mutes).personal).to.deep.equal([]);
  });

  it('sorts ids in UTF-8 byte order, as PostgreSQL’s COLLATE "C" does', () => {
    expect(['b', 'B', '\u{1F600}', '\uFFFD', 'a'].sort(compareCodePoints)).to.deep.equal([
      'B',
      'a',
      'b',
      '\uFFFD',
      '\u{1F600}',
    ]);
  });

  it('pages the union of personal recipients and members exactly as paging the whole union would', () => {
    fc.assert(
      fc.property(
        // Ids from a small set, so a personal recipient who is also a member is common.
        fc.uniqueArray(fc.constantFrom(...'abcdefghij'), { maxLength: 8, size: 'max' }),
        fc.uniqueArray(fc.constantFrom(...'abcdefghij'), { maxLength: 8, size: 'max' }),
        fc.integer({ min: 1, max: 5 }),
        (personalIds, memberIds, limit) => {
          const personal = [...personalIds].sort(byteOrder);
          const members = [...memberIds].sort(byteOrder);
          const union = [...new Set([...personal, ...members])].sort(byteOrder);
          const seen: string[] = [];
          let after: string | undefined;
          for (let guard = 0; guard < 50; guard++) {
            const later = members.filter((id) => after === undefined || byteOrder(id, after) > 0);
            const page = recipientsPage(
              personal,
              { userIds: later.slice(0, limit), more: later.length > limit },
              after,
              limit,
            );
            seen.push(...page.userIds);
            if (page.next === undefined) break;
            after = page.next;
          }
          expect(seen).to.deep.equal(union);
        },
      ),
    );
  });
});

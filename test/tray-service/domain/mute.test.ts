import { expect } from 'chai';
import {
  countsTowardSpanLimit,
  heldBackByMutes,
  muteCovers,
  muteEnd,
  muteInForceAt,
  type Mute,
} from '../../../tray-service/domain/mute.ts';
import {
  LATEST_MUTE_UNTIL,
  muteInForce,
  muteUntilProblem,
  putMute,
  removeMute,
} from '../../../tray-service/domain/mute-changes.ts';
import { aComment, aMention, aPost, aReply } from '../../support/activity-builder.ts';

const mute = (targetType: Mute['targetType'], targetId: string, extra: Partial<Mute> = {}): Mute => ({
  userId: 'u-ana',
  targetType,
  targetId,
  createdAt: 100,
  until: null,
  removedAt: null,
  ...extra,
});
const comment = aComment('u-ben', { postId: 'p-1', owner: 'u-ana' }, { id: 'cm-1', at: 150 });
const reply = aReply('u-ben', { commentId: 'cm-1', owner: 'u-ana', postId: 'p-1' }, { id: 'cm-2', at: 150 });
const post = aPost('u-ben', { id: 'p-1', at: 150 });
const mention = aMention('u-ben', 'u-ana', { in: 'comment', commentId: 'cm-1', postId: 'p-1' }, { at: 150 });
const feedComment = aComment(
  'u-ben',
  { postId: 'p-9', owner: 'u-ana' },
  { id: 'cm-9', at: 150, userFeed: 'u-ana' },
);

describe('mutes (docs/tray-rules.md#inbox)', () => {
  it('a post mute covers the post and everything on it but mentions of the owner', () => {
    const muted = mute('post', 'p-1');
    expect([post, comment, reply, mention].map((a) => muteCovers(muted, a))).to.deep.equal([
      true,
      true,
      true,
      false,
    ]);
    expect(muteCovers(mute('post', 'p-2'), comment)).to.equal(false);
  });

  it('a community mute covers its posts and everything on them but mentions, not user feeds', () => {
    const muted = mute('community', 'c-hike');
    expect([post, comment, reply, mention, feedComment].map((a) => muteCovers(muted, a))).to.deep.equal([
      true,
      true,
      true,
      false,
      false,
    ]);
  });

  it('a user mute covers every activity of that actor, mentions included', () => {
    expect([post, comment, mention, feedComment].every((a) => muteCovers(mute('user', 'u-ben'), a))).to.equal(
      true,
    );
    expect(muteCovers(mute('user', 'u-cy'), comment)).to.equal(false);
  });

  it('is in force from createdAt until `until` passes or it is removed', () => {
    expect([99, 100, 199, 200].map((t) => muteInForceAt(mute('user', 'x', { until: 200 }), t))).to.deep.equal(
      [false, true, true, false],
    );
    expect([149, 150].map((t) => muteInForceAt(mute('user', 'x', { removedAt: 150 }), t))).to.deep.equal([
      true,
      false,
    ]);
  });

  it('holds an activity back by the activity time, whenever it is judged', () => {
    const ended = mute('post', 'p-1', { removedAt: 200 });
    expect(heldBackByMutes([ended], comment)).to.equal(true);
    expect(heldBackByMutes([ended], { ...comment, at: 250 })).to.equal(false);
    expect(heldBackByMutes([ended], { ...comment, at: 50 })).to.equal(false);
  });

  it('a second put of a mute in force changes only `until`; after its end a new span starts', () => {
    const first = putMute([], 'u-ana', { targetType: 'post', targetId: 'p-1' }, null, 100);
    const again = putMute(first, 'u-ana', { targetType: 'post', targetId: 'p-1' }, 500, 300);
    expect(again).to.deep.equal([mute('post', 'p-1', { until: 500 })]);
    const later = putMute(again, 'u-ana', { targetType: 'post', targetId: 'p-1' }, null, 600);
    expect(later.map((m) => [m.createdAt, m.until])).to.deep.equal([
      [100, 500],
      [600, null],
    ]);
  });

  it('removing ends the span in force and keeps it; nothing in force: removed false', () => {
    const target = { targetType: 'post' as const, targetId: 'p-1' };
    const { mutes, removed } = removeMute([mute('post', 'p-1')], target, 300);
    expect([removed, mutes]).to.deep.equal([true, [mute('post', 'p-1', { removedAt: 300 })]]);
    expect(removeMute(mutes, target, 400).removed).to.equal(false);
    expect(muteInForce(mutes, target, 400)).to.equal(undefined);
  });

  it('refuses an `until` not in the future', () => {
    expect([muteUntilProblem(null, 10), muteUntilProblem(11, 10)]).to.deep.equal([undefined, undefined]);
    expect(muteUntilProblem(10, 10)).to.equal('until: expected a time later than now');
  });

  it('refuses an `until` later than the end of year 9999', () => {
    expect(muteUntilProblem(LATEST_MUTE_UNTIL, 10)).to.equal(undefined);
    expect(muteUntilProblem(LATEST_MUTE_UNTIL + 1, 10)).to.equal(
      'until: expected a time no later than 9999-12-31T23:59:59.999Z',
    );
    expect(muteUntilProblem(8_639_995_000_000_000, 10)).to.match(/^until: expected a time no later than/);
  });
});

describe('the spans counted toward the limit of a target', () => {
  const KEEP = 1_000;
  it('ends a span at its until or its removal, whichever came first, and never without either', () => {
    expect(muteEnd(mute('post', 'p-1'))).to.equal(Infinity);
    expect(muteEnd(mute('post', 'p-1', { until: 300 }))).to.equal(300);
    expect(muteEnd(mute('post', 'p-1', { until: 300, removedAt: 200 }))).to.equal(200);
    expect(muteEnd(mute('post', 'p-1', { until: 300, removedAt: 400 }))).to.equal(300);
  });

  it('counts a span in force and one that ended within the retention, not one that ended before', () => {
    const now = 5_000;
    expect(countsTowardSpanLimit(mute('post', 'p-1'), now, KEEP)).to.equal(true);
    expect(countsTowardSpanLimit(mute('post', 'p-1', { until: now + 1 }), now, KEEP)).to.equal(true);
    expect(countsTowardSpanLimit(mute('post', 'p-1', { removedAt: now - KEEP + 1 }), now, KEEP)).to.equal(
      true,
    );
    expect(countsTowardSpanLimit(mute('post', 'p-1', { removedAt: now - KEEP }), now, KEEP)).to.equal(false);
    expect(countsTowardSpanLimit(mute('post', 'p-1', { until: 200, removedAt: 4_500 }), now, KEEP)).to.equal(
      false,
    );
  });
});

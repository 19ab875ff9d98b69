import { expect } from 'chai';
import { FUTURE_TOLERANCE_MS } from '../../../tray-service/domain/event-time.ts';
import { mapEvent } from '../../../tray-service/domain/map-event.ts';
import { banEvent } from '../bans/ban-events.ts';
import {
  commentEvent,
  membershipEvent,
  postDeleteEvent,
  postEvent,
  reactionEvent,
} from '../worker/event-builder.ts';

const receivedAt = Date.parse('2026-11-20T12:00:00.000Z');
const iso = (ms: number): string => new Date(ms).toISOString();
/** A platform whose clock ran years ahead, or that sent milliseconds where seconds were meant. */
const farFuture = iso(Date.parse('2099-01-01T00:00:00.000Z'));
const justInside = receivedAt + FUTURE_TOLERANCE_MS;

// A date far past its receipt would sort its record first for good and never let it expire; a
// join or leave dated so would change nothing until then. Such a date counts from the receipt.
describe('event times: a date more than a day after the receipt', () => {
  it('allows a platform clock up to a day ahead of the receiver', () => {
    expect(FUTURE_TOLERANCE_MS).to.equal(24 * 60 * 60 * 1000);
    const mapped = mapEvent({ ...commentEvent({ createdAt: iso(justInside) }), receivedAt });
    expect(mapped.activities.map((activity) => activity.at)).to.deep.equal([justInside]);
  });

  it('dates a post, comment or reaction past that with its receipt', () => {
    for (const envelope of [
      postEvent({ createdAt: farFuture, mentions: ['u-ben'] }),
      commentEvent({ createdAt: iso(justInside + 1) }),
      reactionEvent({ createdAt: farFuture }),
    ]) {
      const mapped = mapEvent({ ...envelope, receivedAt });
      expect(mapped.status, envelope.event).to.equal('applied');
      expect(mapped.activities.length, envelope.event).to.be.greaterThan(0);
      for (const activity of mapped.activities) expect(activity.at, envelope.event).to.equal(receivedAt);
    }
  });

  it('dates a join, a leave, a ban and a removal past that with its receipt', () => {
    const join = mapEvent({ ...membershipEvent('join', ['u-eve'], 'c-hike', farFuture), receivedAt });
    expect(join.memberships.map((change) => change.at)).to.deep.equal([receivedAt]);
    const ban = mapEvent({ ...banEvent('ban', ['u-eve'], farFuture), receivedAt });
    expect(ban.bans?.map((change) => change.at)).to.deep.equal([receivedAt]);
    const removal = mapEvent({ ...postDeleteEvent({ deletedAt: farFuture }), receivedAt });
    expect(removal.removals?.map((change) => change.at)).to.deep.equal([receivedAt]);
  });

  // A later delivery of an event stored before (past the dedupe window) must date it as the first
  // did; an event without a date of its own is dated by the delivery, as always.
  it('counts a far date from the first receipt on a later delivery, and an undated join from this one', () => {
    const later = receivedAt + 3 * 24 * 60 * 60 * 1000;
    const post = mapEvent({
      ...postEvent({ createdAt: farFuture }),
      receivedAt: later,
      firstReceivedAt: receivedAt,
    });
    expect(post.activities.map((activity) => activity.at)).to.deep.equal([receivedAt]);
    const join = mapEvent({
      ...membershipEvent('join', ['u-eve']),
      receivedAt: later,
      firstReceivedAt: receivedAt,
    });
    expect(join.memberships.map((change) => change.at)).to.deep.equal([later]);
  });

  it('leaves a date in the past as the platform sent it', () => {
    const past = iso(receivedAt - 3 * 24 * 60 * 60 * 1000);
    const mapped = mapEvent({ ...postEvent({ createdAt: past }), receivedAt });
    expect(mapped.activities.map((activity) => activity.at)).to.deep.equal([Date.parse(past)]);
  });
});

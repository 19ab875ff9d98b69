import { expect } from 'chai';
import { eventMatches } from '../../../tray-service/domain/events-filter.ts';
import type { StoredEvent } from '../../../tray-service/domain/stored-event.ts';

const event: StoredEvent = {
  key: 'k',
  event: 'post.didCreate',
  data: {},
  webhook: 'main',
  receivedAt: new Date('2026-11-20T10:00:00Z'),
  storedAt: new Date('2026-11-20T10:00:01Z'),
  expiresAt: new Date('2026-12-20T10:00:00Z'),
  status: 'applied',
  userId: 'u-ana',
  communityId: 'c-hike',
};

describe('eventMatches (one event against the admin filters)', () => {
  it('passes an event that meets every condition of the filter', () => {
    expect(eventMatches({}, event)).to.equal(true);
    expect(
      eventMatches(
        {
          event: 'post.didCreate',
          webhook: 'main',
          status: 'applied',
          userId: 'u-ana',
          communityId: 'c-hike',
          moderation: 'none',
          since: new Date('2026-11-20T10:00:00Z'),
          until: new Date('2026-11-20T10:00:00.001Z'),
        },
        event,
      ),
    ).to.equal(true);
  });
  it('refuses it on any one condition it fails, until being exclusive', () => {
    for (const filter of [
      { event: 'comment.didCreate' },
      { webhook: 'other' },
      { status: 'invalid' as const },
      { userId: 'u-ben' },
      { communityId: 'c-run' },
      { moderation: 'any' as const },
      { moderation: 'flag' as const },
      { until: new Date('2026-11-20T10:00:00Z') },
      { since: new Date('2026-11-20T10:00:00.001Z') },
    ]) {
      expect(eventMatches(filter, event), JSON.stringify(filter)).to.equal(false);
    }
  });
  it('reads the moderation outcome: none, any, or the most severe action', () => {
    const flagged = { ...event, moderation: 'flag' as const };
    expect(eventMatches({ moderation: 'none' }, flagged)).to.equal(false);
    expect(eventMatches({ moderation: 'any' }, flagged)).to.equal(true);
    expect(eventMatches({ moderation: 'flag' }, flagged)).to.equal(true);
    expect(eventMatches({ moderation: 'ban-request' }, flagged)).to.equal(false);
  });
});

import { expect } from 'chai';
import type { StoredEvent } from '../../../tray-service/domain/stored-event.ts';
import {
  parseStoredEvent,
  serializeStoredEvent,
  storedEventsChannel,
} from '../../../tray-service/admin/stored-events-channel.ts';

const event: StoredEvent = {
  key: 'k1',
  event: 'post.didCreate',
  data: { post: { text: 'line\nbreak' } },
  webhook: 'main',
  receivedAt: new Date('2026-11-20T10:00:00.000Z'),
  storedAt: new Date('2026-11-20T10:00:00.020Z'),
  expiresAt: new Date('2026-12-20T10:00:00.000Z'),
  appliedAt: new Date('2026-11-20T10:00:00.045Z'),
  status: 'applied',
  userId: 'u-ana',
  moderation: 'flag',
};

describe('the stored-events channel (the live tail’s announcements)', () => {
  it('carries an event whole, its times back as dates', () => {
    expect(parseStoredEvent(serializeStoredEvent(event))).to.deep.equal(event);
    const { appliedAt: _appliedAt, ...withoutApplied } = event;
    expect(parseStoredEvent(serializeStoredEvent(withoutApplied))).to.deep.equal(withoutApplied);
  });
  it('ignores a message that is not an event', () => {
    for (const message of [
      '',
      'not json',
      'null',
      '[]',
      '{"key":"k"}',
      JSON.stringify({ ...event, receivedAt: 'soon' }),
      JSON.stringify({ ...event, expiresAt: 'never' }),
      // Without its expiry (the tail shows it): a release before events carried one.
      JSON.stringify({ ...event, expiresAt: undefined }),
    ]) {
      expect(parseStoredEvent(message), message).to.equal(undefined);
    }
  });
  it('is one channel under the live prefix', () => {
    expect(storedEventsChannel('tray-live')).to.equal('tray-live:stored-events');
  });
});

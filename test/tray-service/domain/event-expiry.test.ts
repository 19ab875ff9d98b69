import { expect } from 'chai';
import { eventExpiry } from '../../../tray-service/domain/event-expiry.ts';
import { DAY_MS } from '../../../shared/time/durations.ts';

describe('eventExpiry', () => {
  const receivedAt = new Date('2026-11-01T10:00:00.000Z');

  it('is the retention after the receipt for an event stored before it', () => {
    expect(eventExpiry(receivedAt, receivedAt, 30)).to.deep.equal(
      new Date(receivedAt.getTime() + 30 * DAY_MS),
    );
  });

  it('is the retention after the storing for one stored later (a replay after the retention passed)', () => {
    const storedAt = new Date(receivedAt.getTime() + 35 * DAY_MS);
    expect(eventExpiry(receivedAt, storedAt, 30)).to.deep.equal(new Date(storedAt.getTime() + 30 * DAY_MS));
  });

  it('is the retention after the receipt for one stored late within it', () => {
    const storedAt = new Date(receivedAt.getTime() + 29 * DAY_MS);
    expect(eventExpiry(receivedAt, storedAt, 30)).to.deep.equal(new Date(receivedAt.getTime() + 30 * DAY_MS));
  });

  it('is the retention after the storing for one stored at the very end of it', () => {
    const storedAt = new Date(receivedAt.getTime() + 30 * DAY_MS);
    expect(eventExpiry(receivedAt, storedAt, 30)).to.deep.equal(new Date(storedAt.getTime() + 30 * DAY_MS));
  });
});

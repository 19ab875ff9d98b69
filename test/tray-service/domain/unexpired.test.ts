import { expect } from 'chai';
import { DAY_MS } from '../../../shared/time/durations.ts';
import { unexpired } from '../../../tray-service/domain/unexpired.ts';

describe('unexpired (docs/tray-engine.md#retention)', () => {
  const lastUpdate = Date.UTC(2026, 0, 15, 12);

  it('holds a record until `retentionDays` after its lastUpdate, and not from that moment on', () => {
    const expiry = lastUpdate + 90 * DAY_MS;
    expect(
      [lastUpdate, expiry - 1, expiry, expiry + 1].map((now) => unexpired({ lastUpdate }, 90, now)),
    ).to.deep.equal([true, true, false, false]);
  });

  it('counts the retention in days', () => {
    expect(unexpired({ lastUpdate }, 1, lastUpdate + DAY_MS - 1)).to.equal(true);
    expect(unexpired({ lastUpdate }, 1, lastUpdate + DAY_MS)).to.equal(false);
    expect(unexpired({ lastUpdate }, 2, lastUpdate + DAY_MS)).to.equal(true);
  });
});

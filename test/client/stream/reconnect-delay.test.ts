import { expect } from 'chai';
import { reconnectDelay, reconnectWait } from '../../../client/src/stream/reconnect-delay.ts';
import { retryAfterMs } from '../../../client/src/request/retry-delay.ts';

describe('reconnectDelay', () => {
  const policy = { initialMs: 1_000, maxMs: 8_000 };

  it('waits between half and all of a step that doubles per attempt up to the cap', () => {
    expect([0, 1, 2, 3, 9].map((attempt) => reconnectDelay(attempt, policy, () => 0))).to.deep.equal([
      500, 1_000, 2_000, 4_000, 4_000,
    ]);
    expect([0, 1, 2, 3, 9].map((attempt) => reconnectDelay(attempt, policy, () => 1))).to.deep.equal([
      1_000, 2_000, 4_000, 8_000, 8_000,
    ]);
  });

  it('spreads clients dropped together', () => {
    const delays = new Set(Array.from({ length: 50 }, () => Math.round(reconnectDelay(0, policy))));
    expect(delays.size).to.be.above(25);
  });
});

describe('reconnectWait', () => {
  const policy = { initialMs: 1_000, maxMs: 8_000 };

  it('waits the backoff when the service names no wait', () => {
    expect(reconnectWait(2, policy, undefined, () => 0)).to.equal(2_000);
  });

  it('waits a named wait, up to a fifth longer at random, where it is longer than the backoff', () => {
    expect(reconnectWait(0, policy, 3_000, () => 0)).to.equal(3_000);
    expect(reconnectWait(0, policy, 3_000, () => 0.5)).to.equal(3_300);
  });

  it('waits the backoff where a named wait is shorter (0 included), and maxMs where it is longer', () => {
    expect(reconnectWait(2, policy, 0, () => 0)).to.equal(2_000);
    expect(reconnectWait(2, policy, 1_500, () => 0)).to.equal(2_000);
    expect(reconnectWait(0, policy, 30 * 86_400_000, () => 0)).to.equal(8_000);
  });

  // Clients told the same long wait by one proxy all came back at exactly maxMs, together.
  it('spreads a wait the cap cuts below maxMs, never below a named wait shorter than maxMs', () => {
    expect(reconnectWait(0, policy, 120_000, () => 0.5)).to.equal(7_200);
    expect(reconnectWait(0, policy, 120_000, () => 0.999)).to.be.closeTo(6_401.6, 0.01);
    const spread = new Set(Array.from({ length: 50 }, () => reconnectWait(0, policy, 120_000)));
    expect(spread.size).to.be.above(40);
    for (const wait of spread) expect(wait).to.be.within(6_400, 8_000);
    expect(reconnectWait(0, policy, 7_000, () => 0.999)).to.equal(7_000);
    expect(reconnectWait(0, policy, 7_000, () => 0.5)).to.equal(7_700);
  });
});

describe('retryAfterMs', () => {
  it('reads delay-seconds and HTTP dates, and nothing else', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs('15', now)).to.equal(15_000);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:03 GMT', now)).to.equal(3_000);
    expect(retryAfterMs('Wed, 31 Dec 2025 00:00:00 GMT', now)).to.equal(0);
    expect(retryAfterMs(null, now)).to.equal(undefined);
    expect(retryAfterMs('soon', now)).to.equal(undefined);
  });
});

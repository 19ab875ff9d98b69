import { expect } from 'chai';
import { responseClock, retryAfterMs, retryDelay } from '../../../client/src/request/retry-delay.ts';

const NOW = Date.UTC(2026, 10, 28, 9, 0, 0);

describe('retryDelay', () => {
  describe('with a Retry-After in seconds', () => {
    it('waits that long at least, and at most a fifth longer', () => {
      expect(retryDelay(0, retryAfterMs('2', NOW), () => 0)).to.equal(2_000);
      expect(retryDelay(3, retryAfterMs('2', NOW), () => 0.999)).to.equal(2_400);
    });
  });

  describe('with a Retry-After shorter than the backoff (0, or a date past)', () => {
    it('waits the backoff, so the retries do not all go at once', () => {
      expect([0, 1, 2].map((attempt) => retryDelay(attempt, retryAfterMs('0', NOW), () => 0))).to.deep.equal([
        250, 500, 1_000,
      ]);
      expect(retryDelay(1, retryAfterMs(new Date(NOW - 7_000).toUTCString(), NOW), () => 0)).to.equal(500);
      expect(retryDelay(2, retryAfterMs('1', NOW), () => 0)).to.equal(1_000);
    });
  });

  describe('with a longest wait (maxRetryWaitMs)', () => {
    it('waits a Retry-After equal to it, the random part cut so the wait stays within it', () => {
      expect(retryDelay(0, retryAfterMs('2', NOW), () => 0, 2_000)).to.equal(2_000);
      expect(retryDelay(0, retryAfterMs('2', NOW), () => 0.999, 2_000)).to.equal(2_000);
      expect(retryDelay(0, retryAfterMs('2', NOW), () => 0.999, 2_100)).to.equal(2_100);
      expect(retryDelay(0, retryAfterMs('2', NOW), () => 0.5, 60_000)).to.equal(2_200);
    });

    it('waits nothing (undefined) for a Retry-After longer than it, whatever the random part', () => {
      expect(retryDelay(0, retryAfterMs('2', NOW), () => 0, 1_999)).to.equal(undefined);
      expect(retryDelay(0, retryAfterMs('2', NOW), () => 0.999, 1_999)).to.equal(undefined);
    });

    it("caps the client's own backoff at it: only a wait the service asks for is refused", () => {
      // Uncapped, the eighth retry's backoff (32 s) passed the default 30 s, and a client given
      // retries: 10 gave up after seven although the service only ever asked for a second.
      expect(retryDelay(7, retryAfterMs('1', NOW), () => 0, 30_000)).to.equal(30_000);
      expect(retryDelay(9, undefined, () => 0.999, 30_000)).to.equal(30_000);
      expect(retryDelay(2, undefined, () => 0, 999)).to.equal(999);
      // A longest wait below the first backoff leaves no wait the client would make.
      expect(retryDelay(0, undefined, () => 0, 0)).to.equal(undefined);
      expect(retryDelay(3, undefined, () => 0, 249)).to.equal(undefined);
    });
  });

  describe('with a Retry-After as an HTTP date', () => {
    it('waits until that time', () => {
      expect(retryDelay(0, retryAfterMs(new Date(NOW + 7_000).toUTCString(), NOW), () => 0)).to.equal(7_000);
      expect(retryAfterMs(new Date(NOW - 7_000).toUTCString(), NOW)).to.equal(0);
    });

    it('reads the obsolete forms a recipient must accept too (RFC 9110): RFC 850 and asctime, in UTC', () => {
      // NOW is Sat, 28 Nov 2026 09:00:00 GMT.
      expect(retryAfterMs('Saturday, 28-Nov-26 09:00:07 GMT', NOW)).to.equal(7_000);
      expect(retryAfterMs('Sat Nov 28 09:00:07 2026', NOW)).to.equal(7_000);
      expect(retryAfterMs('Sat Nov  1 09:00:00 2026', NOW)).to.equal(0);
      expect(retryAfterMs('Sat Dec  5 09:00:00 2026', NOW)).to.equal(7 * 24 * 3_600_000);
      expect(retryAfterMs('Sat Nov 28 09:00:07 2026 junk', NOW)).to.equal(undefined);
      expect(retryAfterMs('Sat Foo 28 09:00:07 2026', NOW)).to.equal(undefined);
    });
  });

  describe('without a Retry-After the service could mean', () => {
    it('doubles from 250 ms with each attempt', () => {
      expect([0, 1, 2, 3].map((attempt) => retryDelay(attempt, undefined, () => 0))).to.deep.equal([
        250, 500, 1_000, 2_000,
      ]);
      expect(retryDelay(1, retryAfterMs('soon', NOW), () => 0)).to.equal(500);
      expect(retryDelay(1, retryAfterMs('-3', NOW), () => 0)).to.equal(500);
    });
  });

  describe("a response's clock", () => {
    it('is its Date header when it has one an HTTP date, else the client’s own', () => {
      const dated = (date?: string) => new Headers(date === undefined ? {} : { Date: date });
      expect(responseClock(dated('Sat, 28 Nov 2026 10:00:00 GMT'), NOW)).to.equal(NOW + 3_600_000);
      expect(responseClock(dated(), NOW)).to.equal(NOW);
      expect(responseClock(dated('yesterday'), NOW)).to.equal(NOW);
      expect(responseClock(dated('Sat, 28 Nov 2026 10:00:00 +0100'), NOW)).to.equal(NOW);
    });
  });
});

import { expect } from 'chai';
import { retryAfterMs, retryDelay } from '../../../client/src/request/retry-delay.ts';

const NOW = Date.UTC(2026, 10, 28, 9, 0, 0);

describe('retryDelay', () => {
  describe('with a Retry-After in seconds', () => {
    it('waits that long at least, and at most a fifth longer', () => {
      expect(retryDelay(0, '2', NOW, () => 0)).to.equal(2_000);
      expect(retryDelay(3, '2', NOW, () => 0.999)).to.equal(2_400);
    });
  });

  describe('with a Retry-After as an HTTP date', () => {
    it('waits until that time', () => {
      expect(retryDelay(0, new Date(NOW + 7_000).toUTCString(), NOW, () => 0)).to.equal(7_000);
      expect(retryAfterMs(new Date(NOW - 7_000).toUTCString(), NOW)).to.equal(0);
    });
  });

  describe('without a Retry-After the service could mean', () => {
    it('doubles from 250 ms with each attempt', () => {
      expect([0, 1, 2, 3].map((attempt) => retryDelay(attempt, null, NOW, () => 0))).to.deep.equal([
        250, 500, 1_000, 2_000,
      ]);
      expect(retryDelay(1, 'soon', NOW, () => 0)).to.equal(500);
      expect(retryDelay(1, '-3', NOW, () => 0)).to.equal(500);
    });
  });
});

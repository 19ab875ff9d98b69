import { expect } from 'chai';
import { cappedExponentialDelay } from '../../../shared/queue/capped-exponential-backoff.ts';
import { webhookJobOptions, webhookRetryDelays } from '../../../shared/queue/webhook-queue.ts';

describe('cappedExponentialDelay', () => {
  const never = () => 0;

  it('doubles from the first wait and then stays at the cap', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7, 8, 40].map((attempts) =>
      cappedExponentialDelay(attempts, { firstMs: 1_000, maxMs: 30_000 }, never),
    );
    expect(delays).to.deep.equal([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000, 30_000]);
  });

  it('stays finite for any attempt count', () => {
    expect(cappedExponentialDelay(10_000, { firstMs: 1_000, maxMs: 30_000 }, never)).to.equal(30_000);
  });

  // Jobs that failed together (a poison post and the posts fanned out with it, an outage's
  // backlog) must not all retry at the same instant, to fail or be gathered together again.
  it('takes up to a fifth off each wait at random, never more and never past the cap', () => {
    const options = { firstMs: 1_000, maxMs: 30_000 };
    expect(cappedExponentialDelay(2, options, () => 0.5)).to.equal(1_800);
    expect(cappedExponentialDelay(9, options, () => 0.999_999)).to.equal(24_000);
    const spread = Array.from({ length: 200 }, () => cappedExponentialDelay(3, options));
    for (const delay of spread) expect(delay).to.be.within(3_200, 4_000);
    expect(new Set(spread).size, 'different jobs wait differently').to.be.above(100);
  });

  describe("with the webhook queue's policy", () => {
    it('retries a job for several minutes in all, so a short database outage costs nothing', () => {
      const attempts = webhookJobOptions.attempts ?? 1;
      let totalMs = 0;
      for (let made = 1; made < attempts; made += 1)
        totalMs += cappedExponentialDelay(made, webhookRetryDelays);
      expect(totalMs).to.be.within(5 * 60_000, 10 * 60_000);
    });
  });
});

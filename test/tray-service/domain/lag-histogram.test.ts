import { expect } from 'chai';
import fc from 'fast-check';
import {
  addLagBuckets,
  emptyLagBuckets,
  LAG_BOUNDS_MS,
  LAG_BUCKETS,
  lagBucket,
  lagQuantile,
} from '../../../tray-service/domain/lag-histogram.ts';

const histogram = (lags: readonly number[]) => {
  const buckets = emptyLagBuckets();
  for (const lag of lags) buckets[lagBucket(lag)]! += 1;
  return buckets;
};
/** The exact q-quantile by rank, as the histogram estimates it. */
const exact = (lags: readonly number[], q: number) =>
  [...lags].sort((a, b) => a - b)[Math.max(1, Math.ceil(q * lags.length)) - 1]!;

describe('lag histogram', () => {
  it('puts a lag in the bucket below the first bound above it', () => {
    expect(lagBucket(0)).to.equal(0);
    expect(lagBucket(0.5)).to.equal(0);
    expect(lagBucket(1)).to.equal(1);
    expect(lagBucket(99)).to.equal(LAG_BOUNDS_MS.indexOf(100));
    expect(lagBucket(100)).to.equal(LAG_BOUNDS_MS.indexOf(100) + 1);
    expect(lagBucket(-5)).to.equal(0);
    expect(lagBucket(10 * 3_600_000)).to.equal(LAG_BUCKETS - 1);
  });

  it('has bounds that grow by at most 1.5x above 2 ms', () => {
    for (let index = 1; index < LAG_BOUNDS_MS.length; index++) {
      expect(LAG_BOUNDS_MS[index]! / LAG_BOUNDS_MS[index - 1]!)
        .to.be.at.most(2)
        .and.above(1);
    }
    for (let index = 2; index < LAG_BOUNDS_MS.length; index++) {
      expect(LAG_BOUNDS_MS[index]! / LAG_BOUNDS_MS[index - 1]!, String(LAG_BOUNDS_MS[index])).to.be.at.most(
        1.5,
      );
    }
  });

  it('estimates p50 and p99 inside the bucket of the true value, never above the max', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 5_000_000 }), { minLength: 1, maxLength: 300 }),
        fc.constantFrom(0.5, 0.99),
        (lags, q) => {
          const max = Math.max(...lags);
          const estimate = lagQuantile(histogram(lags), q, max)!;
          const truth = exact(lags, q);
          const bucket = lagBucket(truth);
          const low = bucket === 0 ? 0 : LAG_BOUNDS_MS[bucket - 1]!;
          const high = Math.min(LAG_BOUNDS_MS[bucket] ?? max, max);
          expect(estimate).to.be.within(low, Math.max(low, high));
          expect(estimate).to.be.at.most(max);
        },
      ),
    );
  });

  it('adds histograms bucket by bucket and knows an empty one has no quantile', () => {
    expect(addLagBuckets(histogram([3, 40]), histogram([40]))).to.deep.equal(histogram([3, 40, 40]));
    expect(lagQuantile(emptyLagBuckets(), 0.5, 0)).to.equal(undefined);
  });
});

import { expect } from 'chai';
import { median, quantile } from '../../../scripts/lib/quantile.ts';

describe("the benches' quantile (scripts/lib/quantile.ts)", () => {
  const thousand = Array.from({ length: 1000 }, (_, i) => i + 1);

  it('takes the value at rank floor(q x n): of 1,000 samples the p99 is the 10th slowest', () => {
    expect(quantile(thousand, 0.99)).to.equal(991);
    expect(quantile(thousand, 0.5)).to.equal(501);
  });

  it('gives the largest for q = 1 and 0 for no samples', () => {
    expect(quantile(thousand, 1)).to.equal(1000);
    expect(quantile([], 0.99)).to.equal(0);
  });

  it('takes the median of an even count as the mean of the two middle values', () => {
    expect(median([1.015, 0.995, 1.013, 1.003])).to.be.closeTo(1.008, 1e-9);
    expect(median([3, 1, 2])).to.equal(2);
    expect(median([])).to.equal(0);
  });
});

import { expect } from 'chai';
import { quantile } from '../../../scripts/lib/quantile.ts';

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
});

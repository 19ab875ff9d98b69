import { expect } from 'chai';
import { partitionPoint } from '../../../shared/arrays/partition-point.ts';

describe('partitionPoint', () => {
  it('counts the leading items before the point, at either end and between', () => {
    const times = [1, 3, 3, 5, 8];
    expect(partitionPoint(times, (at) => at < 0)).to.equal(0);
    expect(partitionPoint(times, (at) => at < 3)).to.equal(1);
    expect(partitionPoint(times, (at) => at <= 3)).to.equal(3);
    expect(partitionPoint(times, (at) => at < 99)).to.equal(5);
    expect(partitionPoint([], () => true)).to.equal(0);
  });
});

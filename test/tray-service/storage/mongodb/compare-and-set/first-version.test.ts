import { expect } from 'chai';
import { firstVersion } from '../../../../../tray-service/storage/mongodb/compare-and-set/first-version.ts';

describe('firstVersion: where a new record’s versions start', () => {
  it('draws a safe integer above every millisecond timestamp, leaving room for the record’s updates', () => {
    const drawn = Array.from({ length: 1_000 }, firstVersion);
    for (const version of drawn) {
      expect(Number.isSafeInteger(version)).to.equal(true);
      expect(version).to.be.above(Date.UTC(9999, 0));
      expect(version + 1e12).to.be.below(Number.MAX_SAFE_INTEGER);
    }
  });

  it('draws another version for each life of a record, on any clock', () => {
    expect(new Set(Array.from({ length: 1_000 }, firstVersion)).size).to.equal(1_000);
  });
});

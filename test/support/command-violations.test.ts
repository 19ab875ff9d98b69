import { expect } from 'chai';
import { commandViolations } from './command-violations.ts';

const ids = (n: number) => Array.from({ length: n }, (_, i) => `id${i}`);
const limits = { maxSingleUpdates: 40 };

describe('commandViolations (the command guard’s rule)', () => {
  it('accepts 40 single-document updates in one command and refuses 41; multi updates do not count', () => {
    const single = (n: number) => Array.from({ length: n }, (_, i) => ({ q: { _id: `r${i}` }, u: {} }));
    expect(commandViolations('update', { update: 'c', updates: single(40) }, limits)).to.deep.equal([]);
    expect(commandViolations('update', { update: 'c', updates: single(41) }, limits)).to.deep.equal([
      'update on c with 41 single-document updates in one command (limit 40)',
    ]);
    const multi = single(1000).map((statement) => ({ ...statement, multi: true }));
    expect(commandViolations('update', { update: 'c', updates: multi }, limits)).to.deep.equal([]);
  });

  it('ignores every other command, a long $in included, and honours another limit', () => {
    expect(commandViolations('insert', { insert: 'c', documents: ids(500) }, limits)).to.deep.equal([]);
    expect(
      commandViolations('find', { find: 'c', filter: { _id: { $in: ids(500) } } }, limits),
    ).to.deep.equal([]);
    const single = Array.from({ length: 3 }, (_, i) => ({ q: { _id: `r${i}` }, u: {} }));
    expect(
      commandViolations('update', { update: 'c', updates: single }, { maxSingleUpdates: 2 }),
    ).to.have.lengthOf(1);
  });
});

import { expect } from 'chai';
import { commandViolations } from './command-violations.ts';

const ids = (n: number) => Array.from({ length: n }, (_, i) => `id${i}`);
const limits = { maxInValues: 10, maxSingleUpdates: 40 };

describe('commandViolations (the command guard’s rule)', () => {
  it('accepts a $in of up to 10 values and refuses 11, in find, count, update and delete filters', () => {
    expect(commandViolations('find', { find: 'c', filter: { _id: { $in: ids(10) } } }, limits)).to.deep.equal(
      [],
    );
    for (const [name, command] of [
      ['find', { find: 'c', filter: { _id: { $in: ids(11) } } }],
      ['count', { count: 'c', query: { userId: { $nin: ids(11) } } }],
      ['update', { update: 'c', updates: [{ q: { _id: { $in: ids(11) } }, u: {}, multi: true }] }],
      ['delete', { delete: 'c', deletes: [{ q: { _id: { $in: ids(11) } }, limit: 0 }] }],
    ] as const) {
      expect(commandViolations(name, command, limits), name).to.deep.equal([
        `${name} on c with a $in/$nin of 11 values (limit 10)`,
      ]);
    }
  });

  it('finds a long $in nested in $or, $and and $elemMatch', () => {
    const filter = { $or: [{ a: 1 }, { $and: [{ list: { $elemMatch: { userId: { $in: ids(12) } } } }] }] };
    expect(commandViolations('find', { find: 'c', filter }, limits)).to.have.lengthOf(1);
  });

  it('accepts 40 single-document updates in one command and refuses 41; multi updates do not count', () => {
    const single = (n: number) => Array.from({ length: n }, (_, i) => ({ q: { _id: `r${i}` }, u: {} }));
    expect(commandViolations('update', { update: 'c', updates: single(40) }, limits)).to.deep.equal([]);
    expect(commandViolations('update', { update: 'c', updates: single(41) }, limits)).to.deep.equal([
      'update on c with 41 single-document updates in one command (limit 40)',
    ]);
    const multi = single(1000).map((statement) => ({ ...statement, multi: true }));
    expect(commandViolations('update', { update: 'c', updates: multi }, limits)).to.deep.equal([]);
  });

  it('ignores commands without a filter to check (insert, aggregate) and honours other limits', () => {
    expect(commandViolations('insert', { insert: 'c', documents: ids(500) }, limits)).to.deep.equal([]);
    expect(
      commandViolations(
        'find',
        { find: 'c', filter: { _id: { $in: ids(3) } } },
        { ...limits, maxInValues: 2 },
      ),
    ).to.have.lengthOf(1);
  });
});

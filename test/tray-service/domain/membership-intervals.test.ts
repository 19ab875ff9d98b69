import { expect } from 'chai';
import {
  isMemberAt,
  membershipIntervals,
  pruneBelow,
  spanOfJoin,
  type MembershipEdge,
} from '../../../tray-service/domain/membership-intervals.ts';

const join = (at: number): MembershipEdge => ({ joined: true, at });
const leave = (at: number): MembershipEdge => ({ joined: false, at });

/** Every ordering of a small list. */
function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, index) =>
    permutations([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [item, ...rest]),
  );
}

describe('membershipIntervals', () => {
  it('makes a member from the join (inclusive) until the leave (exclusive)', () => {
    const spans = membershipIntervals([join(10), leave(20)]);
    expect(spans).to.deep.equal([{ from: 10, to: 20 }]);
    expect([9, 10, 19, 20].map((at) => isMemberAt(spans, at))).to.deep.equal([false, true, true, false]);
  });

  it('gives the same intervals whatever order the changes arrive in', () => {
    const changes = [join(10), leave(20), join(30), leave(40), join(50), join(10)];
    const expected = [
      { from: 10, to: 20 },
      { from: 30, to: 40 },
      { from: 50, to: Infinity },
    ];
    for (const order of permutations(changes)) expect(membershipIntervals(order)).to.deep.equal(expected);
  });

  it('keeps the first join of a membership: a second join while a member changes nothing', () => {
    expect(membershipIntervals([join(10), join(15), leave(20)])).to.deep.equal([{ from: 10, to: 20 }]);
  });

  it('ignores a leave of a user who is not a member', () => {
    expect(membershipIntervals([leave(5), join(10), leave(20), leave(25)])).to.deep.equal([
      { from: 10, to: 20 },
    ]);
  });

  it('leaves the user out when a join and a leave have the same time, in either order', () => {
    expect(membershipIntervals([leave(10), join(10)])).to.deep.equal([]);
    expect(membershipIntervals([join(10), leave(10)])).to.deep.equal([]);
    expect(isMemberAt(membershipIntervals([join(0), leave(10), join(10)]), 10)).to.equal(false);
  });

  it('has no interval without a join', () => {
    expect(membershipIntervals([])).to.deep.equal([]);
    expect(isMemberAt([], 0)).to.equal(false);
  });
});

describe('spanOfJoin', () => {
  it('is the span from the join until the next leave', () => {
    const spans = membershipIntervals([join(10), leave(20), join(30)]);
    expect(spanOfJoin(spans, 10)).to.deep.equal({ from: 10, to: 20 });
    expect(spanOfJoin(spans, 30)).to.deep.equal({ from: 30, to: Infinity });
  });

  it('starts at the join even inside an earlier membership (what was before is already there)', () => {
    expect(spanOfJoin(membershipIntervals([join(10), join(15), leave(20)]), 15)).to.deep.equal({
      from: 15,
      to: 20,
    });
  });

  it('is undefined for a join that a leave at the same time cancels', () => {
    expect(spanOfJoin(membershipIntervals([join(10), leave(10)]), 10)).to.equal(undefined);
  });
});

describe('pruneBelow', () => {
  it('drops what precedes the newest change at or before the cutoff', () => {
    expect(pruneBelow([join(10), leave(20), join(30), leave(100)], 50)).to.equal(30);
  });

  it('prunes nothing when at most one change is that old', () => {
    expect(pruneBelow([join(10), leave(100)], 50)).to.equal(undefined);
    expect(pruneBelow([join(60)], 50)).to.equal(undefined);
  });

  it('keeps the state at the cutoff: the pruned changes decide nothing from the cutoff on', () => {
    const changes = [join(10), leave(20), join(30), join(35), leave(100), join(120)];
    const below = pruneBelow(changes, 50);
    const kept = changes.filter((change) => below === undefined || change.at >= below);
    for (let at = 50; at <= 130; at += 5)
      expect(isMemberAt(membershipIntervals(kept), at), `at ${at}`).to.equal(
        isMemberAt(membershipIntervals(changes), at),
      );
  });
});

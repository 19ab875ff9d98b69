import { expect } from 'chai';
import fc from 'fast-check';
import { DAY_MS } from '../../../shared/time/durations.ts';
import {
  awayFor,
  awayForAction,
  awayForPost,
  awaySpans,
  isAwayAt,
  isMemberAt,
  memberFor,
  membershipIntervals,
  prunableChanges,
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
  const placed = (edge: MembershipEdge, processed: number): MembershipEdge => ({ ...edge, processed });

  it('is the span from the join until the next leave processed before it', () => {
    // The leave is dated after the join and processed before it (the platform's events out of order).
    const edges = [placed(join(10), 2), placed(leave(20), 1), placed(join(30), 3)];
    expect(spanOfJoin(edges, 10)).to.deep.equal({ from: 10, to: 20 });
    expect(spanOfJoin(edges, 30)).to.deep.equal({ from: 30, to: Infinity });
    // The same leave processed after the join: it takes nothing back, so it ends nothing.
    expect(spanOfJoin([placed(join(10), 2), placed(leave(20), 3)], 10)).to.deep.equal({
      from: 10,
      to: Infinity,
    });
  });

  it('starts at the join even inside an earlier membership (what was before is already there)', () => {
    const edges = [placed(join(10), 1), placed(join(15), 2), placed(leave(20), 1.5)];
    expect(spanOfJoin(edges, 15)).to.deep.equal({ from: 15, to: 20 });
  });

  it('is undefined for a join that a leave at its time processed before it cancels, and whole when the leave came after', () => {
    expect(spanOfJoin([placed(join(10), 2), placed(leave(10), 1)], 10)).to.equal(undefined);
    expect(spanOfJoin([placed(join(10), 1), placed(leave(10), 2)], 10)).to.deep.equal({
      from: 10,
      to: Infinity,
    });
  });

  it('agrees with memberFor on every post processed before the join, whatever the leaves around it', () => {
    // A post at `at` processed before the join (place 0) is in the span exactly when the join lets it in.
    const join10 = placed(join(10), 5);
    for (const leaves of [
      [],
      [placed(leave(10), 3)],
      [placed(leave(10), 7)],
      [placed(leave(20), 3), placed(leave(30), 7)],
    ]) {
      const edges = [join10, ...leaves];
      const span = spanOfJoin(edges, 10);
      for (const at of [9, 10, 15, 20, 25, 30, 35])
        expect(
          span !== undefined && span.from <= at && at < span.to,
          `${JSON.stringify(leaves)} at ${at}`,
        ).to.equal(memberFor(edges, at, 0));
    }
  });

  it('ends a join stored before the order was kept (place 0, or none) at every later leave, as its intervals do', () => {
    for (const old of [0, undefined]) {
      const stored = old === undefined ? join(10) : placed(join(10), old);
      expect(spanOfJoin([stored, placed(leave(20), 3)], 10), String(old)).to.deep.equal({ from: 10, to: 20 });
      expect(spanOfJoin([stored, placed(leave(10), 3)], 10), String(old)).to.equal(undefined);
    }
  });

  it('ends at a leave processed after the join a day past that leave’s processing: no post processed before it is dated later', () => {
    const leftAt = 20 * DAY_MS;
    const edges = [placed(join(DAY_MS), 5), { ...placed(leave(leftAt), 7), processedAt: leftAt + 3_600_000 }];
    expect(spanOfJoin(edges, DAY_MS)).to.deep.equal({ from: DAY_MS, to: leftAt + 3_600_000 + DAY_MS });
    // Processed before its own time (the platform's clock behind): the span still reaches the leave.
    const early = [
      placed(join(DAY_MS), 5),
      { ...placed(leave(leftAt), 7), processedAt: leftAt - 2 * DAY_MS },
    ];
    expect(spanOfJoin(early, DAY_MS)).to.deep.equal({ from: DAY_MS, to: leftAt });
  });

  it('is undefined for a join that is not among the edges', () => {
    expect(spanOfJoin([placed(join(10), 1)], 11)).to.equal(undefined);
  });
});

describe('prunableChanges', () => {
  // Days, processed in the order of their times unless a case says otherwise.
  const d = (n: number) => n * DAY_MS;
  const at = (
    joined: boolean,
    day: number,
    processedDay = day,
    processed = processedDay,
  ): MembershipEdge => ({
    joined,
    at: d(day),
    processed,
    processedAt: d(processedDay),
  });

  it('drops, of changes processed long before the cutoff, all but the newest leave, the newest join after it and those at the newest time', () => {
    const changes = [at(true, 10), at(false, 20), at(true, 30), at(false, 40), at(true, 45), at(false, 100)];
    expect(prunableChanges(changes, d(50)).map((edge) => edge.at / DAY_MS)).to.deep.equal([10, 20, 30]);
  });

  it('prunes nothing when at most one change is that old', () => {
    expect(prunableChanges([at(true, 10), at(false, 100)], d(50))).to.deep.equal([]);
    expect(prunableChanges([at(true, 60)], d(50))).to.deep.equal([]);
  });

  it('keeps a join that a leave processed late (after a post it is dated before) must not take back', () => {
    // Joined on day 10, a post on day 50 (processed day 50), the leave of day 20 processed on day 60.
    const changes = [at(true, 10, 10, 1), at(false, 20, 60, 3)];
    expect(prunableChanges(changes, d(50))).to.deep.equal([]);
    // The post counts before the prune and after it.
    expect(memberFor(changes, d(50), 2)).to.equal(true);
  });

  it('never prunes a change without a processing time', () => {
    const changes: MembershipEdge[] = [join(d(10)), leave(d(20)), join(d(30)), leave(d(40))];
    expect(prunableChanges(changes, d(50))).to.deep.equal([]);
  });

  it('changes nothing an action at or after the cutoff is judged by, whenever it was processed (property)', () => {
    const cutoff = d(50);
    // A change: its day, kind, how many days after its own time it was processed, and whether
    // that time is unknown (stored before it was kept).
    const change = fc.record({
      day: fc.integer({ min: 0, max: 80 }),
      joined: fc.boolean(),
      late: fc.nat(40),
      unknown: fc.boolean(),
    });
    // An action at or after the cutoff, processed between a day before its time and 30 days after.
    const action = fc.record({
      day: fc.integer({ min: 50, max: 90 }),
      late: fc.integer({ min: -1, max: 30 }),
    });
    fc.assert(
      fc.property(
        fc.array(change, { maxLength: 9 }),
        fc.array(action, { minLength: 1, maxLength: 6 }),
        (drawn, actions) => {
          // One change per time and kind, as stored; the processing order follows the processing clock.
          const unique = [...new Map(drawn.map((c) => [`${c.day}-${c.joined}`, c])).values()];
          const events = [
            ...unique.map((c, index) => ({
              kind: 'change' as const,
              index,
              time: d(c.day + c.late) + index,
            })),
            ...actions.map((a, index) => ({
              kind: 'action' as const,
              index,
              time: d(a.day + a.late) + 100 + index,
            })),
          ].sort((a, b) => a.time - b.time);
          const placeOf = new Map(events.map((event, place) => [`${event.kind}-${event.index}`, place + 1]));
          const edges = unique.map((c, index) => ({
            joined: c.joined,
            at: d(c.day),
            processed: placeOf.get(`change-${index}`) ?? 0,
            ...(c.unknown ? {} : { processedAt: d(c.day + c.late) + index }),
          }));
          const pruned = new Set(prunableChanges(edges, cutoff));
          const kept = edges.filter((edge) => !pruned.has(edge));
          const judged = [
            ...actions.map((a, index) => ({ at: d(a.day), processed: placeOf.get(`action-${index}`) ?? 0 })),
            // And actions processed after everything stored so far.
            ...actions.map((a) => ({ at: d(a.day), processed: events.length + 1 })),
          ];
          for (const { at: time, processed } of judged) {
            expect(memberFor(kept, time, processed), `memberFor ${time / DAY_MS} #${processed}`).to.equal(
              memberFor(edges, time, processed),
            );
            expect(awayFor(kept, time, processed), `awayFor ${time / DAY_MS} #${processed}`).to.equal(
              awayFor(edges, time, processed),
            );
          }
          for (let day = 50; day <= 95; day += 1)
            expect(isMemberAt(membershipIntervals(kept), d(day)), `member on day ${day}`).to.equal(
              isMemberAt(membershipIntervals(edges), d(day)),
            );
        },
      ),
      { numRuns: 2_000 },
    );
  });
});

describe('awayFor and memberFor (a leave stops only what is processed after it)', () => {
  // Processing order: 1, 2, 3, ... A change stored before the order was kept has none (0).
  const change = (joined: boolean, at: number, processed?: number) =>
    processed === undefined ? { joined, at } : { joined, at, processed };

  it('counts an action processed before a leave that covers it, and not one processed after', () => {
    const edges = [change(true, 0, 1), change(false, 20, 3)];
    expect([awayFor(edges, 30, 2), memberFor(edges, 30, 2)]).to.deep.equal([false, true]);
    expect([awayFor(edges, 30, 4), memberFor(edges, 30, 4)]).to.deep.equal([true, false]);
    // Before the leave's time it counts, whenever it is processed.
    expect(awayFor(edges, 10, 4)).to.equal(false);
  });

  it('lets a late join add what falls in its span by the leaves processed before it', () => {
    // Posts processed first (1, 2); then a leave at 20 (3); then a join at 0 (4): only the post before 20.
    const leaveFirst = [change(false, 20, 3), change(true, 0, 4)];
    expect([memberFor(leaveFirst, 10, 1), memberFor(leaveFirst, 30, 2)]).to.deep.equal([true, false]);
    // The join processed before the leave: it added both, and the leave takes neither back.
    const joinFirst = [change(true, 0, 3), change(false, 20, 4)];
    expect([memberFor(joinFirst, 10, 1), memberFor(joinFirst, 30, 2)]).to.deep.equal([true, true]);
  });

  // Leave at 20 processed after the action at 30 (late: takes nothing back), then a join at 0
  // processed after both: the action stays counted, as the late leave left it.
  it('lets no join processed after a late leave take back the action the leave left counted', () => {
    const edges = [change(false, 20, 2), change(true, 0, 3)];
    expect([awayFor(edges, 30, 1), memberFor(edges, 30, 1)]).to.deep.equal([false, false]);
    // An action processed after both is away: the leave was known by then.
    expect(awayFor(edges, 30, 4)).to.equal(true);
  });

  // A post reaches members only: the fan-out gave it to nobody it knew no join of, and a late join
  // adds only what falls in its span, so a join beyond that span still leaves the post out.
  it('keeps a community post out that a late join does not reach (awayForPost), where another action stays', () => {
    const edges = [change(true, 25, 1), change(false, 15, 3), change(true, 0, 4)];
    expect([awayForPost(edges, 20, 2), awayFor(edges, 20, 2)]).to.deep.equal([true, false]);
    expect(awayForAction(edges, { verb: 'post', at: 20 }, 2)).to.equal(true);
    expect(awayForAction(edges, { verb: 'comment', at: 20 }, 2)).to.equal(false);
  });

  it('holds nothing back from a user the tray knew no change of when the action was processed', () => {
    expect(awayFor([change(false, 5, 2)], 10, 1)).to.equal(false);
    expect(awayFor([change(false, 5, 2)], 10, 3)).to.equal(true);
    expect(awayFor([], 10, 1)).to.equal(false);
  });

  it('takes changes without a place as processed before every action (stored before the order was kept)', () => {
    const edges = [change(true, 0), change(false, 20)];
    expect(awayFor(edges, 30, 1)).to.equal(true);
    expect(awayFor(edges, 10, 1)).to.equal(false);
  });

  it('agrees with awaySpans when every change was processed before the action', () => {
    const edges = [change(true, 0, 1), change(false, 10, 2), change(true, 20, 3), change(false, 20, 4)];
    for (const at of [-1, 0, 5, 10, 15, 20, 25])
      expect(awayFor(edges, at, 9), `at ${at}`).to.equal(isAwayAt(awaySpans(edges), at));
  });
});

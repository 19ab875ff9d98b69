import { expect } from 'chai';
import { LAG_BUCKETS, lagBucket, lagQuantile } from '../../../../tray-service/domain/lag-histogram.ts';
import type { TrayStorage } from '../../../../tray-service/storage/port.ts';
import { MINUTE } from './case-fixtures.ts';
import { conformanceCase } from './conformance-case.ts';

/**
 * The stored events' per-minute rollups (EventsPort.perMinute, lagPerMinute): kept as events are
 * stored and applied, each event counted once, equal to what was seeded.
 */

/**
 * Whole minutes before the minute this is called in (retention runs on the real clock). Each case
 * fixes its minute once: read per call, a case crossing a minute boundary would split its events.
 */
function minutesBeforeNow() {
  const thisMinute = Math.floor(Date.now() / MINUTE) * MINUTE;
  return (minutes: number) => new Date(thisMinute - minutes * MINUTE);
}

async function store(storage: TrayStorage, key: string, event: string, receivedAt: Date) {
  return storage.events.store(
    { key, event, data: {}, webhook: 'rollups', receivedAt },
    { status: 'applied' },
    { retentionDays: 7, now: new Date() },
  );
}

conformanceCase(
  'rollups: events per minute and name equal the events stored, a redelivery counted once',
  async ({ isolated }) => {
    const storage = await isolated();
    const minuteAgo = minutesBeforeNow();
    const seeded: [number, string, number][] = [
      [10, 'post.didCreate', 3],
      [10, 'comment.didCreate', 2],
      [9, 'post.didCreate', 1],
      [7, 'reaction.didAdd', 4],
    ];
    let n = 0;
    for (const [ago, event, count] of seeded) {
      for (let i = 0; i < count; i++) {
        await store(storage, `k-${n++}`, event, new Date(minuteAgo(ago).getTime() + i * 7_000));
      }
    }
    // Concurrent stores share a batch; a redelivery (same key) counts nothing.
    await Promise.all([
      store(storage, 'k-0', 'post.didCreate', minuteAgo(10)),
      store(storage, 'k-c1', 'post.didCreate', minuteAgo(9)),
      store(storage, 'k-c2', 'post.didCreate', minuteAgo(9)),
    ]);
    const rows = await storage.events.perMinute(minuteAgo(10), minuteAgo(6));
    expect(rows).to.deep.equal([
      { minute: minuteAgo(10), counts: { 'post.didCreate': 3, 'comment.didCreate': 2 } },
      { minute: minuteAgo(9), counts: { 'post.didCreate': 3 } },
      { minute: minuteAgo(7), counts: { 'reaction.didAdd': 4 } },
    ]);
    // until is exclusive, since inclusive.
    expect(
      (await storage.events.perMinute(minuteAgo(9), minuteAgo(7))).map((row) => row.counts),
    ).to.deep.equal([{ 'post.didCreate': 3 }]);
    expect(await storage.events.perMinute(minuteAgo(5), minuteAgo(0))).to.deep.equal([]);
  },
);

conformanceCase(
  'rollups: each event’s lag is counted once, at its first markApplied, into its minute’s histogram',
  async ({ isolated }) => {
    const storage = await isolated();
    const minuteAgo = minutesBeforeNow();
    const lags = [[12, 40, 40, 250, 900, 1_200, 3_100], [5]] as const;
    let n = 0;
    for (const [index, list] of lags.entries()) {
      for (const lag of list) {
        const receivedAt = new Date(minuteAgo(20 - index).getTime() + 5_000);
        const stored = await store(storage, `lag-${n++}`, 'post.didCreate', receivedAt);
        await storage.events.markApplied(stored, new Date(receivedAt.getTime() + lag));
        // A retried or replayed job marks it again: nothing more is counted.
        await storage.events.markApplied(stored, new Date(receivedAt.getTime() + lag + 60_000));
      }
    }
    const minutes = await storage.events.lagPerMinute(minuteAgo(30), minuteAgo(0));
    const histogram = (list: readonly number[]) => {
      const buckets = new Array<number>(LAG_BUCKETS).fill(0);
      for (const lag of list) buckets[lagBucket(lag)]! += 1;
      return buckets;
    };
    expect(minutes).to.deep.equal([
      { minute: minuteAgo(20), count: 7, buckets: histogram(lags[0]), maxMs: 3_100 },
      { minute: minuteAgo(19), count: 1, buckets: histogram(lags[1]), maxMs: 5 },
    ]);
    expect(lagQuantile(minutes[0]!.buckets, 0.5, minutes[0]!.maxMs)).to.be.within(200, 300);
  },
);

// A first mark whose answer was lost (a connection dropped after the commit) left its job's rerun
// with false: the event was never counted in the worker's metrics nor announced on the live tail.
// The rerun carries the same maker, and is told it made the mark.
conformanceCase(
  'rollups: a later markApplied by the first mark’s maker resolves true again, counting nothing more',
  async ({ isolated }) => {
    const storage = await isolated();
    const minuteAgo = minutesBeforeNow();
    const receivedAt = new Date(minuteAgo(20).getTime() + 5_000);
    const stored = await store(storage, 'lag-rerun', 'post.didCreate', receivedAt);
    const at = (ms: number) => new Date(receivedAt.getTime() + ms);
    expect(await storage.events.markApplied(stored, at(40), 'job-1:0')).to.equal(true);
    expect(await storage.events.markApplied(stored, at(90), 'job-1:0')).to.equal(true);
    // Any other maker (the job's next attempt, a replay) or none: not the first.
    expect(await storage.events.markApplied(stored, at(95), 'job-1:1')).to.equal(false);
    expect(await storage.events.markApplied(stored, at(99))).to.equal(false);
    const minutes = await storage.events.lagPerMinute(minuteAgo(30), minuteAgo(0));
    expect(minutes.map(({ count, maxMs }) => ({ count, maxMs }))).to.deep.equal([{ count: 1, maxMs: 40 }]);
    expect((await storage.events.get('lag-rerun'))?.appliedAt).to.deep.equal(at(40));
  },
);

// Two makers' marks of one event at once (a stalled job taken over, a replay while the job runs):
// PostgreSQL's group commit told the first call it made the mark while the row took the second's
// maker and time, so a rerun of the second was announced again and a rerun of the first was not;
// MongoDB on FerretDB counted the lag twice. What both engines keep: a maker told it made the
// mark, and a maker told otherwise stays so on its rerun. The test server's updates are a read and
// then a write, not atomic as MongoDB's and PostgreSQL's are, so there both makers may take the
// first mark and count the lag (one or both told so) under load (docs/storage.md); exactly once is
// PostgreSQL's own test.
conformanceCase(
  'rollups: of two makers marking one event at once, one is told it made the mark, a maker told otherwise stays so',
  async ({ isolated }) => {
    const storage = await isolated();
    const minuteAgo = minutesBeforeNow();
    const receivedAt = new Date(minuteAgo(20).getTime() + 5_000);
    const stored = await store(storage, 'lag-twins', 'post.didCreate', receivedAt);
    const at = (ms: number) => new Date(receivedAt.getTime() + ms);
    const makers = [
      { by: 'job-a:0', at: at(40) },
      { by: 'job-b:0', at: at(50) },
    ];
    const answers = await Promise.all(
      makers.map((maker) => storage.events.markApplied(stored, maker.at, maker.by)),
    );
    expect(answers).to.include(true);
    // One after the other: the stored maker's rerun is told it made the mark; a maker told
    // otherwise stays so.
    const reruns: boolean[] = [];
    for (const maker of makers) reruns.push(await storage.events.markApplied(stored, at(90), maker.by));
    expect(reruns).to.include(true);
    for (const [index, maker] of makers.entries())
      if (answers[index] === false) expect(reruns[index], maker.by).to.equal(false);
    const minutes = await storage.events.lagPerMinute(minuteAgo(30), minuteAgo(0));
    expect(minutes).to.have.length(1);
    expect(minutes[0]?.count).to.be.within(1, makers.length);
  },
);

conformanceCase('rollups: minutes of expired events are not read', async ({ isolated }) => {
  const storage = await isolated();
  const old = new Date(Math.floor(Date.now() / MINUTE) * MINUTE - 3 * 24 * 60 * MINUTE);
  const stored = await storage.events.store(
    { key: 'old', event: 'post.didCreate', data: {}, webhook: 'rollups', receivedAt: old },
    { status: 'applied' },
    { retentionDays: 1, now: old },
  );
  await storage.events.markApplied(stored, new Date(old.getTime() + 10));
  const range = [new Date(old.getTime() - MINUTE), new Date(old.getTime() + MINUTE)] as const;
  expect(await storage.events.perMinute(...range)).to.deep.equal([]);
  expect(await storage.events.lagPerMinute(...range)).to.deep.equal([]);
  await storage.purgeExpired(new Date());
  expect(await storage.events.perMinute(...range)).to.deep.equal([]);
});

// A minute's count is kept while any of its events is: its expiry is the latest of its events' own
// expiries, whichever was stored first (EVENTS_RETENTION_DAYS may change between two of them).
conformanceCase(
  'rollups: a minute is counted as long as its latest-expiring event is kept, whichever was stored first',
  async ({ isolated }) => {
    const storage = await isolated();
    const old = new Date(Math.floor(Date.now() / MINUTE) * MINUTE - 3 * 24 * 60 * MINUTE);
    const range = [old, new Date(old.getTime() + MINUTE)] as const;
    for (const [index, retentionDays] of [1, 30, 1].entries()) {
      const receivedAt = new Date(old.getTime() + index * 10_000);
      const stored = await storage.events.store(
        { key: `mixed-${index}`, event: 'comment.didCreate', data: {}, webhook: 'rollups', receivedAt },
        { status: 'applied' },
        { retentionDays, now: receivedAt },
      );
      await storage.events.markApplied(stored, new Date(receivedAt.getTime() + 10));
    }
    expect(await storage.events.perMinute(...range)).to.deep.equal([
      { minute: old, counts: { 'comment.didCreate': 3 } },
    ]);
    expect((await storage.events.lagPerMinute(...range)).map((minute) => minute.count)).to.deep.equal([3]);
    await storage.purgeExpired(new Date());
    expect(await storage.events.perMinute(...range)).to.deep.equal([
      { minute: old, counts: { 'comment.didCreate': 3 } },
    ]);
    expect((await storage.events.lagPerMinute(...range)).map((minute) => minute.count)).to.deep.equal([3]);
  },
);

// An event's name is the sender's (any string the receiver accepts), and it names a count:
// `constructor`, `__proto__` or a name with `$` or `.` counts like any other.
conformanceCase(
  'rollups: an event named like a property of every object, or with $ or a dot, is counted like any other',
  async ({ isolated }) => {
    const storage = await isolated();
    const minuteAgo = minutesBeforeNow();
    const names = ['constructor', '__proto__', 'toString', '$set', 'a.b', 'hasOwnProperty'];
    for (const [index, name] of names.entries()) {
      await store(storage, `odd-${index}`, name, minuteAgo(3));
      await store(storage, `odd-again-${index}`, name, minuteAgo(3));
    }
    const [row, ...rest] = await storage.events.perMinute(minuteAgo(3), minuteAgo(2));
    expect(rest).to.deep.equal([]);
    expect(row?.minute).to.deep.equal(minuteAgo(3));
    const counts = Object.entries(row?.counts ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
    expect(counts).to.deep.equal(names.map((name) => [name, 2]).sort(([a], [b]) => (a! < b! ? -1 : 1)));
  },
);

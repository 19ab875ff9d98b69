import { expect } from 'chai';
import { compareCodePoints } from '../../../tray-service/domain/code-point-order.ts';
import type { EventMinute } from '../../../tray-service/storage/port.ts';
import {
  MAX_CHART_SERIES,
  chartSeries,
  createEventCharts,
} from '../../../tray-service/use-cases/event-charts.ts';

const MINUTE = 60_000;
const FROM = Date.UTC(2026, 11, 7, 12, 0);

/** Charts over rollup rows given here: the use case's own shaping, no storage involved. */
const chartsOver = (rows: EventMinute[]) =>
  createEventCharts({
    perMinute: async () => rows,
    lagPerMinute: async () => [],
  });

describe('event charts', () => {
  it('keeps every name as its own series while there are few', async () => {
    const rows = [{ minute: new Date(FROM), counts: { 'post.didCreate': 2, 'comment.didCreate': 1 } }];
    const chart = await chartsOver(rows).eventsPerMinute({ from: FROM, to: FROM + 2 * MINUTE });
    expect(chart.series).to.deep.equal([
      { event: 'comment.didCreate', counts: [1, 0] },
      { event: 'post.didCreate', counts: [2, 0] },
    ]);
    expect(chart.others).to.equal(undefined);
  });

  it('folds the least frequent names beyond the cap into one `others` series, keeping every count', async () => {
    // A sender inventing names (one event each) must not make a day's chart names × 1,440 numbers.
    const invented = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`made.up${i}`, 1]));
    const rows: EventMinute[] = [
      { minute: new Date(FROM), counts: { 'post.didCreate': 50, ...invented } },
      { minute: new Date(FROM + MINUTE), counts: { 'reaction.didAdd': 7, 'made.up3': 4 } },
    ];
    const chart = await chartsOver(rows).eventsPerMinute({ from: FROM, to: FROM + 2 * MINUTE });
    expect(chart.series).to.have.lengthOf(MAX_CHART_SERIES);
    const names = chart.series.map((s) => s.event);
    expect(names).to.include.members(['post.didCreate', 'reaction.didAdd', 'made.up3']);
    expect([...names].sort()).to.deep.equal(names);
    expect(chart.others?.events).to.equal(502 - MAX_CHART_SERIES);
    const total = (counts: number[]) => counts.reduce((sum, n) => sum + n, 0);
    const shown = chart.series.reduce((sum, s) => sum + total(s.counts), 0);
    expect(shown + total(chart.others!.counts)).to.equal(50 + 500 + 7 + 4);
    expect(chart.others!.counts).to.have.lengthOf(2);
  });

  it('keeps ties at the cap by name, so the same rollups always chart the same series', async () => {
    const counts = Object.fromEntries(
      Array.from({ length: MAX_CHART_SERIES + 1 }, (_, i) => [`e${String(i).padStart(2, '0')}`, 3]),
    );
    const chart = await chartsOver([{ minute: new Date(FROM), counts }]).eventsPerMinute({
      from: FROM,
      to: FROM + MINUTE,
    });
    expect(chart.series.map((s) => s.event)).to.not.include(`e${MAX_CHART_SERIES}`);
    expect(chart.others).to.deep.equal({ events: 1, counts: [3] });
  });

  it('charts what a per-name array for every name would, ties and all', async () => {
    const minutes = [FROM, FROM + MINUTE, FROM + 2 * MINUTE];
    // 45 names: totals tied across the cut, a name counted 0, names above U+FFFF (code point
    // order), a minute given in two rows and one outside the range.
    const names = Array.from({ length: 45 }, (_, i) => (i % 7 === 0 ? `\u{1F600}${i}` : `\uFFFD${i}`));
    const rows: EventMinute[] = minutes.map((minute, m) => ({
      minute: new Date(minute),
      counts: Object.fromEntries(names.map((name, i) => [name, (i * (m + 1)) % 4])),
    }));
    rows.push({ minute: new Date(FROM + MINUTE), counts: { [names[3]!]: 2, 'late.one': 1 } });
    rows.push({ minute: new Date(FROM - MINUTE), counts: { [names[5]!]: 50 } });
    const chart = await chartsOver(rows).eventsPerMinute({ from: FROM, to: FROM + 3 * MINUTE });
    expect(chart.others?.events).to.be.above(0);
    expect(chart).to.deep.equal({
      from: FROM,
      to: FROM + 3 * MINUTE,
      minutes,
      ...allArraysFirst(minutes, rows),
    });
    expect(chartSeries(minutes, rows)).to.deep.equal(allArraysFirst(minutes, rows));
  });

  // A sender putting ids into event names (100k a day) made a day's chart allocate 100k × 1,440
  // numbers, over 1 GB, in the process serving the tray API, before keeping 30 of them.
  it('charts a day of 100,000 one-off names with an array for the 30 shown and `others` only', async function () {
    this.timeout(1_500);
    const day = 1_440;
    const rows: EventMinute[] = Array.from({ length: day }, (_, m) => ({
      minute: new Date(FROM + m * MINUTE),
      counts: { 'post.didCreate': 5 },
    }));
    const names = 100_000;
    for (let i = 0; i < names; i++) rows[i % day]!.counts[`id.${String(i).padStart(6, '0')}`] = 1;
    const chart = await chartsOver(rows).eventsPerMinute({ from: FROM, to: FROM + day * MINUTE });
    // The busiest name, then the 29 one-off names first in name order (ties by name).
    const shown = Array.from({ length: MAX_CHART_SERIES - 1 }, (_, i) => `id.${String(i).padStart(6, '0')}`);
    expect(chart.series.map((s) => s.event)).to.deep.equal([...shown, 'post.didCreate']);
    expect(chart.series[MAX_CHART_SERIES - 1]!.counts).to.deep.equal(new Array(day).fill(5));
    chart.series.slice(0, -1).forEach((s, i) => expect(s.counts[i], s.event).to.equal(1));
    const perMinute = (m: number) => Math.ceil((names - m) / day);
    expect(chart.others).to.deep.equal({
      events: names - (MAX_CHART_SERIES - 1),
      counts: Array.from({ length: day }, (_, m) => perMinute(m) - (m < MAX_CHART_SERIES - 1 ? 1 : 0)),
    });
  });
});

/** The chart as first written: an array per name, then the most frequent kept (ties by name). */
function allArraysFirst(minutes: number[], rows: EventMinute[]) {
  const all = new Map<string, number[]>();
  for (const row of rows) {
    const at = minutes.indexOf(row.minute.getTime());
    if (at < 0) continue;
    for (const [event, count] of Object.entries(row.counts)) {
      const counts = all.get(event) ?? new Array<number>(minutes.length).fill(0);
      counts[at]! += count;
      all.set(event, counts);
    }
  }
  const total = (counts: number[]) => counts.reduce((sum, n) => sum + n, 0);
  const ranked = [...all].sort(([a, x], [b, y]) => total(y) - total(x) || compareCodePoints(a, b));
  const series = ranked
    .slice(0, MAX_CHART_SERIES)
    .sort(([a], [b]) => compareCodePoints(a, b))
    .map(([event, counts]) => ({ event, counts }));
  const left = ranked.slice(MAX_CHART_SERIES);
  if (left.length === 0) return { series };
  const others = minutes.map((_, at) => left.reduce((sum, [, counts]) => sum + counts[at]!, 0));
  return { series, others: { events: left.length, counts: others } };
}

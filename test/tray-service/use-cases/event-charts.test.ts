import { expect } from 'chai';
import type { EventMinute } from '../../../tray-service/storage/port.ts';
import { MAX_CHART_SERIES, createEventCharts } from '../../../tray-service/use-cases/event-charts.ts';

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
});

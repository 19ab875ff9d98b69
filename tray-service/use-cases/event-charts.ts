import { MINUTE_MS } from '../../shared/time/durations.ts';
import { addLagBuckets, emptyLagBuckets, lagQuantile } from '../domain/lag-histogram.ts';
import { compareCodePoints } from '../domain/code-point-order.ts';
import type { EventMinute, EventsPort } from '../storage/port.ts';

/** The minutes a chart covers: whole minutes from `since`'s to the one `until` falls in. */
export interface ChartRange {
  /** First minute (epoch ms, inclusive). */
  from: number;
  /** End (epoch ms, exclusive): the minute after the last. */
  to: number;
}

/** Where a chart ending at `until` ends: `until` widened to a whole minute (epoch ms). */
export function chartEnd(until: Date): number {
  return Math.ceil(until.getTime() / MINUTE_MS) * MINUTE_MS;
}

/** [since, until) widened to whole minutes. */
export function chartRange(since: Date, until: Date): ChartRange {
  const from = Math.floor(since.getTime() / MINUTE_MS) * MINUTE_MS;
  return { from, to: Math.max(from + MINUTE_MS, chartEnd(until)) };
}

const minutesOf = (range: ChartRange) =>
  Array.from({ length: (range.to - range.from) / MINUTE_MS }, (_, index) => range.from + index * MINUTE_MS);

/**
 * Most event names a chart draws on their own: the platform sends about twenty, and a sender
 * inventing names (each stored as an unknown event) would otherwise make a day's chart names × 1,440
 * numbers to send and draw.
 */
export const MAX_CHART_SERIES = 30;

export interface EventsPerMinuteChart extends ChartRange {
  minutes: number[];
  /**
   * One series per event name (byte order), a count per minute (0 where none): the
   * MAX_CHART_SERIES most frequent over the range when there are more (ties by name).
   */
  series: { event: string; counts: number[] }[];
  /** The names left out of `series`, summed per minute; absent when none are. */
  others?: { events: number; counts: number[] };
}

export interface LagChart extends ChartRange {
  minutes: number[];
  /** Events applied per minute (the histograms' sizes). */
  count: number[];
  /** Per minute, in ms; null for a minute without events. p50 and p99 are estimates (domain/lag-histogram.ts). */
  p50: (number | null)[];
  p99: (number | null)[];
  max: (number | null)[];
  /** The whole range at once. */
  overall: { count: number; p50: number | null; p99: number | null; max: number | null };
}

/**
 * The series of `minutes` (epoch ms) in the rollup rows (rows of other minutes left out): totals
 * first, a number per name, and a per-minute array only for the MAX_CHART_SERIES names shown and
 * `others`. A sender putting ids into names (100k a day) would otherwise make a day's chart
 * allocate an array of 1,440 numbers per name, over 1 GB, to keep 30 of them.
 */
export function chartSeries(
  minutes: readonly number[],
  rows: readonly EventMinute[],
): Pick<EventsPerMinuteChart, 'series' | 'others'> {
  const index = new Map(minutes.map((minute, at) => [minute, at]));
  const totals = new Map<string, number>();
  for (const row of rows) {
    if (!index.has(row.minute.getTime())) continue;
    for (const [event, count] of Object.entries(row.counts))
      totals.set(event, (totals.get(event) ?? 0) + count);
  }
  const shown = new Map(
    mostFrequent(totals)
      .sort(compareCodePoints)
      .map((event) => [event, new Array<number>(minutes.length).fill(0)]),
  );
  const left = totals.size - shown.size;
  const others = left > 0 ? new Array<number>(minutes.length).fill(0) : undefined;
  for (const row of rows) {
    const at = index.get(row.minute.getTime());
    if (at === undefined) continue;
    for (const [event, count] of Object.entries(row.counts)) {
      const counts = shown.get(event) ?? others;
      if (counts) counts[at] = (counts[at] ?? 0) + count;
    }
  }
  const series = [...shown].map(([event, counts]) => ({ event, counts }));
  return others ? { series, others: { events: left, counts: others } } : { series };
}

/**
 * The MAX_CHART_SERIES names of the highest totals (ties by name), in that order, picked in one
 * pass: sorting every name (100k a day from a sender putting ids into names) to keep 30 costs more.
 */
function mostFrequent(totals: ReadonlyMap<string, number>): string[] {
  const before = ([a, x]: [string, number], [b, y]: [string, number]) => y - x || compareCodePoints(a, b);
  // In rank order: the last is the one a better name pushes out.
  const top: [string, number][] = [];
  for (const entry of totals) {
    const last = top.at(-1);
    if (top.length === MAX_CHART_SERIES && last && before(entry, last) >= 0) continue;
    let at = top.length;
    for (let above = top[at - 1]; above && before(entry, above) < 0; above = top[at - 1]) at -= 1;
    top.splice(at, 0, entry);
    if (top.length > MAX_CHART_SERIES) top.pop();
  }
  return top.map(([event]) => event);
}

/** The events console's traffic charts, from the per-minute rollups storage keeps (never the events). */
export function createEventCharts(events: Pick<EventsPort, 'perMinute' | 'lagPerMinute'>) {
  return {
    async eventsPerMinute(range: ChartRange): Promise<EventsPerMinuteChart> {
      const minutes = minutesOf(range);
      const rows = await events.perMinute(new Date(range.from), new Date(range.to));
      return { ...range, minutes, ...chartSeries(minutes, rows) };
    },

    async lag(range: ChartRange): Promise<LagChart> {
      const minutes = minutesOf(range);
      const byMinute = new Map(
        (await events.lagPerMinute(new Date(range.from), new Date(range.to))).map((row) => [
          row.minute.getTime(),
          row,
        ]),
      );
      const all = emptyLagBuckets();
      let overallMax: number | null = null;
      const chart: LagChart = {
        ...range,
        minutes,
        count: [],
        p50: [],
        p99: [],
        max: [],
        overall: { count: 0, p50: null, p99: null, max: null },
      };
      for (const minute of minutes) {
        const row = byMinute.get(minute);
        chart.count.push(row?.count ?? 0);
        chart.p50.push(row ? (lagQuantile(row.buckets, 0.5, row.maxMs) ?? null) : null);
        chart.p99.push(row ? (lagQuantile(row.buckets, 0.99, row.maxMs) ?? null) : null);
        chart.max.push(row && row.count > 0 ? row.maxMs : null);
        if (row) {
          addLagBuckets(all, row.buckets);
          overallMax = Math.max(overallMax ?? 0, row.maxMs);
        }
      }
      const count = chart.count.reduce((sum, n) => sum + n, 0);
      chart.overall = {
        count,
        p50: overallMax === null ? null : (lagQuantile(all, 0.5, overallMax) ?? null),
        p99: overallMax === null ? null : (lagQuantile(all, 0.99, overallMax) ?? null),
        max: count > 0 ? overallMax : null,
      };
      return chart;
    },
  };
}

export type EventCharts = ReturnType<typeof createEventCharts>;

import { MINUTE_MS } from '../../shared/time/durations.ts';
import { addLagBuckets, emptyLagBuckets, lagQuantile } from '../domain/lag-histogram.ts';
import { compareCodePoints } from '../domain/code-point-order.ts';
import type { EventsPort } from '../storage/port.ts';

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

/** The events console's traffic charts, from the per-minute rollups storage keeps (never the events). */
export function createEventCharts(events: Pick<EventsPort, 'perMinute' | 'lagPerMinute'>) {
  return {
    async eventsPerMinute(range: ChartRange): Promise<EventsPerMinuteChart> {
      const minutes = minutesOf(range);
      const index = new Map(minutes.map((minute, at) => [minute, at]));
      const series = new Map<string, number[]>();
      for (const row of await events.perMinute(new Date(range.from), new Date(range.to))) {
        const at = index.get(row.minute.getTime());
        if (at === undefined) continue;
        for (const [event, count] of Object.entries(row.counts)) {
          let counts = series.get(event);
          if (!counts) series.set(event, (counts = new Array<number>(minutes.length).fill(0)));
          counts[at] = (counts[at] ?? 0) + count;
        }
      }
      const sum = (counts: number[]) => counts.reduce((total, n) => total + n, 0);
      const byFrequency = [...series]
        .map(([event, counts]) => ({ event, counts, total: sum(counts) }))
        .sort((a, b) => b.total - a.total || compareCodePoints(a.event, b.event));
      const shown = byFrequency
        .slice(0, MAX_CHART_SERIES)
        .sort((a, b) => compareCodePoints(a.event, b.event))
        .map(({ event, counts }) => ({ event, counts }));
      const left = byFrequency.slice(MAX_CHART_SERIES);
      if (left.length === 0) return { ...range, minutes, series: shown };
      const others = new Array<number>(minutes.length).fill(0);
      for (const { counts } of left) counts.forEach((n, at) => (others[at] = (others[at] ?? 0) + n));
      return { ...range, minutes, series: shown, others: { events: left.length, counts: others } };
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

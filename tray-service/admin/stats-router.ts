import type Bull from 'bull';
import { Router } from 'express';
import { AppError } from '../../shared/errors/app-error.ts';
import { jobCounts } from '../../shared/queue/job-counts.ts';
import { DAY_MS } from '../../shared/time/durations.ts';
import { chartEnd, chartRange, type EventCharts } from '../use-cases/event-charts.ts';
import { queueStats } from '../use-cases/queue-stats.ts';
import { chartRangeQuery, nothing } from './api-schema/admin-inputs.ts';
import type { EventsPerMinuteBody, LagChartBody, QueueStatsBody } from './api-schema/console-outputs.ts';
import { EARLIEST_TIME, parseQuery, requireOrderedRange } from './parse-query.ts';

export interface StatsRouterDeps {
  charts: EventCharts;
  /** The queues whose counts GET /stats/queue reports (the webhook queue, moderation-decisions). */
  queues: readonly Bull.Queue[];
  clock?: () => number;
}

/** Longest range of a chart: a day of minutes. */
export const MAX_CHART_MS = DAY_MS;

/** The latest end of a chart: its end is widened to a whole minute, which must still be in 9999. */
const LATEST_CHART_END = new Date(Date.UTC(9999, 11, 31, 23, 59));

/**
 * GET /admin/stats/*: the events console's traffic charts (events per minute by name, the lag from
 * acknowledgement to tray) over at most 24 hours, from the per-minute rollups, and the queues'
 * job counts (docs/operations.md#events-console-api).
 */
export function createStatsRouter(deps: StatsRouterDeps): Router {
  const router = Router();
  const clock = deps.clock ?? Date.now;

  /**
   * since/until, defaulting to the last 1,440 minutes (not before 1970), as whole minutes. The defaults
   * are filled in before the checks, and a refusal names a parameter the caller sent: `since`
   * alone is judged against now, the default `until`.
   */
  const rangeOf = (query: unknown) => {
    const given = parseQuery(chartRangeQuery, query);
    requireOrderedRange(given);
    const until = given.until ?? new Date(clock());
    // The default is the 1,440 minutes that end with now's: 24 hours before `until` itself would
    // widen to 1,441 whenever now is part-way through a minute.
    const since = given.since ?? new Date(Math.max(EARLIEST_TIME.getTime(), chartEnd(until) - MAX_CHART_MS));
    if (since >= until) {
      throw new AppError(
        'VALIDATION',
        given.until === undefined
          ? 'since: must be earlier than now (the default until)'
          : 'until: must be later than 1970-01-01T00:00:00Z',
      );
    }
    if (until.getTime() - since.getTime() > MAX_CHART_MS) {
      throw new AppError(
        'VALIDATION',
        given.until === undefined
          ? 'since: at most 24 hours before now (the default until)'
          : 'until: at most 24 hours after since',
      );
    }
    if (until > LATEST_CHART_END) {
      throw new AppError(
        'VALIDATION',
        'until: at most 9999-12-31T23:59:00Z (a chart ends on a whole minute)',
      );
    }
    // Widened to whole minutes, 24 hours given part-way through a minute span 1,441: the chart
    // keeps the 1,440 that end with until's, as the default range does.
    const range = chartRange(since, until);
    return { from: Math.max(range.from, range.to - MAX_CHART_MS), to: range.to };
  };
  const iso = (range: { from: number; to: number }) => ({
    from: new Date(range.from).toISOString(),
    to: new Date(range.to).toISOString(),
  });

  router.get('/stats/events-per-minute', async (req, res) => {
    const chart = await deps.charts.eventsPerMinute(rangeOf(req.query));
    res.json({ ...chart, ...iso(chart) } satisfies EventsPerMinuteBody);
  });

  router.get('/stats/lag', async (req, res) => {
    const chart = await deps.charts.lag(rangeOf(req.query));
    res.json({ ...chart, ...iso(chart) } satisfies LagChartBody);
  });

  router.get('/stats/queue', async (req, res) => {
    parseQuery(nothing, req.query);
    const stats: QueueStatsBody = await queueStats(
      deps.queues.map((queue) => ({
        name: queue.name,
        counts: () => jobCounts(queue),
      })),
    );
    res.json(stats);
  });

  return router;
}

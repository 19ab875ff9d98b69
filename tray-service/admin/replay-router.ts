import { Router } from 'express';
import { AppError } from '../../shared/errors/app-error.ts';
import { jsonBody } from '../http/require-json.ts';
import { createConcurrencySlots } from './concurrency-slots.ts';
import { REPLAY_EXPIRY_MARGIN_MS, type ReplayProgress, type Replays } from '../use-cases/replay-events.ts';
import { nothing } from './api-schema/admin-inputs.ts';
import type { ReplayedBody, ReplayProgressBody, ReplayStartedBody } from './api-schema/console-outputs.ts';
import { parseEventsFilter } from './parse-events-filter.ts';
import { parseQuery } from './parse-query.ts';

export interface ReplayRouterDeps {
  replays: Replays;
  /** Where the router is mounted: the Location of a started replay. */
  mountPath: string;
  /** The most events one replay of a filter may take (create-admin-router.ts: 100,000). */
  maxEvents: number;
}

/**
 * Replays of one event running at once on this instance. Each runs the worker's whole apply path
 * inline (a community post: a write to every member's tray), outside the worker's own concurrency:
 * uncapped, a script sending hundreds at once would load the database as hundreds of workers.
 */
export const SINGLE_REPLAYS_AT_ONCE = 4;

const iso = (at: Date | undefined) => (at === undefined ? undefined : at.toISOString());

/** A replay's progress as the API shows it (times ISO 8601). */
function progressView(progress: ReplayProgress): ReplayProgressBody {
  const { since, until, ...filter } = progress.filter;
  return {
    id: progress.id,
    state: progress.state,
    total: progress.total,
    done: progress.done,
    failed: progress.failed,
    expired: progress.expired,
    filter: {
      ...filter,
      ...(since === undefined ? {} : { since: iso(since) }),
      ...(until === undefined ? {} : { until: iso(until) }),
    },
    startedAt: progress.startedAt.toISOString(),
    updatedAt: progress.updatedAt.toISOString(),
    ...(progress.finishedAt === undefined ? {} : { finishedAt: progress.finishedAt.toISOString() }),
  };
}

/**
 * Replaying stored events into the tray through the worker's apply path (docs/operations.md#events-console-api):
 * POST /events/:key/replay (one, answered when done), POST /events/replay (a filter's events, in
 * the background: 202 and its id), GET /replays/:id (its progress).
 */
export function createReplayRouter(deps: ReplayRouterDeps): Router {
  const router = Router();

  router.post('/events/replay', ...jsonBody(), async (req, res) => {
    // The filter is the body's; one sent in the query (as every other call selecting events takes
    // it) would otherwise be dropped, and the replay take every stored event.
    parseQuery(nothing, req.query);
    // No body is no filter, not every event: a bare POST (a curl without -d) replayed them all.
    if (req.body === undefined)
      throw new AppError(
        'VALIDATION',
        'body: send the events filter as a JSON object ({} replays every stored event)',
      );
    const filter = parseEventsFilter(req.body, 'field');
    const started = await deps.replays.start(filter);
    if ('busy' in started) {
      throw new AppError(
        'TOO_MANY_REPLAYS',
        `${started.busy} replays are running on this instance, the most at once; try again once one is done`,
        { headers: { 'Retry-After': '30' } },
      );
    }
    if ('refused' in started) {
      throw new AppError(
        'VALIDATION',
        `filter: matches more than ${deps.maxEvents} events, at most ${deps.maxEvents} per replay; narrow it (since/until)`,
      );
    }
    res
      .status(202)
      .location(`${deps.mountPath}/replays/${started.id}`)
      .json({ id: started.id, total: started.total } satisfies ReplayStartedBody);
  });

  const singles = createConcurrencySlots(SINGLE_REPLAYS_AT_ONCE);
  router.post('/events/:key/replay', ...jsonBody(), async (req, res) => {
    parseQuery(nothing, req.query);
    parseQuery(nothing, req.body ?? {}, 'field');
    const release = singles.take();
    if (!release) {
      throw new AppError(
        'TOO_MANY_REPLAYS',
        `${SINGLE_REPLAYS_AT_ONCE} replays of one event are running on this instance, the most at once; try again once one is done`,
        { headers: { 'Retry-After': '1' } },
      );
    }
    let replayed: Awaited<ReturnType<Replays['one']>>;
    try {
      replayed = await deps.replays.one(String(req.params.key));
    } finally {
      release();
    }
    if (!replayed) throw new AppError('NOT_FOUND', 'no stored event with this key');
    if (replayed === 'expiring')
      throw new AppError(
        'GONE',
        `this event expires within ${REPLAY_EXPIRY_MARGIN_MS / 60_000} minutes: it is not replayed (stored again, it would count as a new event)`,
      );
    res.json({ key: replayed.key, replayed: true, status: replayed.status } satisfies ReplayedBody);
  });

  router.get('/replays/:id', async (req, res) => {
    parseQuery(nothing, req.query);
    const progress = /^[\w-]{1,64}$/.test(req.params.id)
      ? await deps.replays.status(req.params.id)
      : undefined;
    if (!progress)
      throw new AppError('NOT_FOUND', 'no replay with this id (kept a day after its last progress)');
    res.json(progressView(progress));
  });

  return router;
}

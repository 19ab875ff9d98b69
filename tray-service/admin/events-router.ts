import { Router } from 'express';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { AppError } from '../../shared/errors/app-error.ts';
import type { Logger } from '../../shared/logging/create-logger.ts';
import type { StoredEventDoc } from '../../shared/tray/tray-record.ts';
import type { EventsFilter, EventsQueries } from '../storage/mongodb/events-queries.ts';
import { toEventView } from './event-view.ts';
import { ndjsonStream } from './ndjson-stream.ts';
import { decodeCursor, encodeCursor } from '../domain/page-cursor.ts';
import { isoTime, nonEmpty, pageLimit, parseQuery, requireOrderedRange } from './parse-query.ts';

export interface EventsRouterDeps {
  events: EventsQueries;
  logger: Logger;
  defaultLimit: number;
  maxLimit: number;
}

/** Values of `status` (StoredEventDoc); the OpenAPI document lists the same. */
export const eventStatuses = [
  'applied',
  'stored',
  'unknown',
  'invalid',
] as const satisfies readonly StoredEventDoc['status'][];

const filterShape = {
  event: nonEmpty('an event name such as post.didCreate').optional(),
  webhook: nonEmpty('a webhook name').optional(),
  status: z
    .enum(eventStatuses, {
      error: 'expected applied, stored, unknown or invalid',
    })
    .optional(),
  since: isoTime.optional(),
  until: isoTime.optional(),
};

function toFilter(query: z.infer<z.ZodObject<typeof filterShape>>): EventsFilter {
  requireOrderedRange(query);
  return Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined));
}

/** GET /admin/events (+ /export, /:key): stored events for moderation and analytics teams. */
export function createEventsRouter(deps: EventsRouterDeps): Router {
  const router = Router();
  const listSchema = z
    .object({
      ...filterShape,
      limit: pageLimit(deps.defaultLimit, deps.maxLimit),
      cursor: z.string().optional(),
    })
    .strict();
  const exportSchema = z.object(filterShape).strict();

  router.get('/events', async (req, res) => {
    const query = parseQuery(listSchema, req.query);
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const { limit: _limit, cursor: _cursor, ...filter } = query;
    const page = await deps.events.list(toFilter(filter), query.limit, after);
    res.json({
      items: page.items.map(toEventView),
      nextCursor: page.next ? encodeCursor(page.next) : null,
    });
  });

  // Before /events/:key, or "export" would be taken for a key.
  router.get('/events/export', async (req, res) => {
    const filter = toFilter(parseQuery(exportSchema, req.query));
    const cursor = deps.events.openCursor(filter);
    res.status(200).type('application/x-ndjson');
    res.set('Content-Disposition', 'attachment; filename="events.ndjson"');
    try {
      // pipeline propagates backpressure and closes the cursor when the client goes away.
      await pipeline(cursor.stream(), ndjsonStream(toEventView), res);
    } catch (error) {
      await cursor.close().catch(() => undefined);
      // Headers are sent: a failure mid-stream can only cut the response short (the client sees a
      // reset and no final newline). A client that went away is not worth a warning.
      const gone = (error as { code?: unknown }).code === 'ERR_STREAM_PREMATURE_CLOSE';
      deps.logger[gone ? 'debug' : 'warn']({ err: error }, 'events export interrupted');
      res.destroy();
    }
  });

  router.get('/events/:key', async (req, res) => {
    const doc = await deps.events.get(req.params.key);
    if (!doc) throw new AppError('NOT_FOUND', 'no stored event with this key');
    res.json(toEventView(doc));
  });

  return router;
}

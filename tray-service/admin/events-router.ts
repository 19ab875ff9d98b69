import { Router, type Response } from 'express';
import { finished, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { withFirstRead } from '../../shared/async/with-first-read.ts';
import { AppError } from '../../shared/errors/app-error.ts';
import type { Logger } from '../../shared/logging/create-logger.ts';
import type { StoredEvent } from '../domain/stored-event.ts';
import type { EventsQuery } from '../use-cases/events-query.ts';
import type { EventDetail } from '../use-cases/event-detail.ts';
import type { EventRecipients } from '../use-cases/event-recipients.ts';
import type { RemovalChanges } from '../use-cases/removal-changes.ts';
import type { ConcurrencySlots } from './concurrency-slots.ts';
import { csvStream } from './csv-stream.ts';
import { dropStalledReader } from './drop-stalled-reader.ts';
import { endWithCredential, type CredentialWatch } from './end-with-credential.ts';
import { toEventDetailView, toEventView, type EventView } from './event-view.ts';
import { ndjsonStream } from './ndjson-stream.ts';
import {
  decodeListCursor,
  decodeRecordCursor,
  decodeUserCursor,
  encodeListCursor,
  encodeRecordCursor,
  encodeUserCursor,
  type PageKey,
} from '../domain/page-cursor.ts';
import { toFilter } from './parse-events-filter.ts';
import { parseQuery } from './parse-query.ts';
import { admittedCaller } from './require-admin.ts';
import {
  eventsExportQuery,
  eventsListQuery,
  nothing,
  recipientsQuery,
  trayChangesQuery,
} from './api-schema/admin-inputs.ts';
import type {
  AdminEventDetailView,
  AdminEventView,
  AdminPageView,
  ExportCheckView,
  TrayChangeView,
} from './api-schema/admin-outputs.ts';

export interface EventsRouterDeps {
  events: EventsQuery;
  /** GET /events/:key: the event with its mapping, recipients and decisions. */
  detail: (key: string) => Promise<EventDetail | undefined>;
  recipients: EventRecipients;
  /** GET /events/:key/tray-changes: what a removal event changed. */
  removalChanges: RemovalChanges;
  logger: Logger;
  defaultLimit: number;
  maxLimit: number;
  /** ADMIN_EXPORT_MAX_ROWS: the most events one export may send. */
  exportMaxRows: number;
  /** ADMIN_EXPORTS_MAX: exports running at once on this instance. */
  exports: ConcurrencySlots;
  /** How long an export's writes may wait for a reader that takes nothing before it is cut off. */
  exportIdleMs: number;
  /** An export carries every payload: it ends with the credential that opened it. */
  credential: CredentialWatch;
}

/** The CSV export's columns: the event view's fields, the payload as one JSON cell. */
export const CSV_COLUMNS = [
  'key',
  'event',
  'webhook',
  'status',
  'error',
  'userId',
  'communityId',
  'moderation',
  'receivedAt',
  'storedAt',
  'appliedAt',
  'expiresAt',
  'data',
] as const;

const csvCells = (view: EventView): string[] =>
  CSV_COLUMNS.map((column) => (column === 'data' ? JSON.stringify(view.data) : String(view[column] ?? '')));

/** GET /admin/events (+ /export, /:key): stored events for moderation and analytics teams. */
export function createEventsRouter(deps: EventsRouterDeps): Router {
  const router = Router();
  const listSchema = eventsListQuery(deps);
  const view = (event: StoredEvent) => toEventView(event);

  router.get('/events', async (req, res) => {
    const { limit, cursor, ...filterQuery } = parseQuery(listSchema, req.query);
    const filter = toFilter(filterQuery);
    // A cursor continues the list and filter it was made for: with another filter it would skip
    // that filter's newer events without a word.
    const scope = { list: 'events', filter } as const;
    const after = cursor === undefined ? undefined : decodeListCursor(cursor, scope);
    const page = await deps.events.list(filter, limit, after);
    res.json({
      items: page.items.map(view),
      nextCursor: page.next ? encodeListCursor(page.next, scope) : null,
    } satisfies AdminPageView<AdminEventView>);
  });

  /**
   * What GET /events/export decides before its first byte: the filter, a free export slot (held
   * until `res` closes and the rows are counted) and the row cap. A refusal throws as the export would answer it.
   */
  const admitExport = async (query: unknown, res: Response) => {
    const { format, after: afterKey, ...filterQuery } = parseQuery(eventsExportQuery, query);
    const filter = toFilter(filterQuery);
    const after = afterKey === undefined ? undefined : await resumedAfter(afterKey);
    // Each export holds a storage cursor and a connection for as long as its client reads.
    const release = deps.exports.take();
    if (release === undefined) {
      throw new AppError(
        'TOO_MANY_EXPORTS',
        'every export slot of this instance is in use; try again shortly',
        {
          headers: { 'Retry-After': '10' },
        },
      );
    }
    // Once the response is over (sent, refused, or cut off by the client, also before this route
    // ran, while a session was looked up, when its 'close' has passed already) and the count has
    // ended: a client that leaves while its rows are counted must not free the slot for another
    // count while its own still runs in the database.
    let over = false;
    let counted = false;
    const releaseWhenBoth = () => {
      if (over && counted) release();
    };
    finished(res, () => {
      over = true;
      releaseWhenBoth();
    });
    let rows: number;
    try {
      // One past the cap says "too many" without counting the rest.
      rows = await deps.events.count(filter, after, deps.exportMaxRows + 1);
    } finally {
      counted = true;
      releaseWhenBoth();
    }
    if (rows > deps.exportMaxRows) {
      throw new AppError(
        'VALIDATION',
        `filter: matches more than ${deps.exportMaxRows} events, at most ${deps.exportMaxRows} per export; narrow it (since/until), or use npm run export-events`,
      );
    }
    return { format, filter, rows, after };
  };

  /** Where an export resumed after the event `key` goes on: that event's place in the order. */
  const resumedAfter = async (key: string): Promise<PageKey> => {
    const event = await deps.events.get(key);
    if (!event) {
      throw new AppError(
        'VALIDATION',
        'after: no stored event has this key (expired, or never stored); start the export again',
      );
    }
    return { at: event.receivedAt, id: event.key };
  };

  // A download link cannot show why it failed: the console asks here first, and shows a refusal.
  router.get('/events/export/check', async (req, res) => {
    const { rows } = await admitExport(req.query, res);
    res.json({ rows } satisfies ExportCheckView);
  });

  // Before /events/:key, or "export" would be taken for a key.
  router.get('/events/export', async (req, res) => {
    const { format, filter, after } = await admitExport(req.query, res);
    const csv = format === 'csv';
    const setHeaders = () => {
      res.status(200).type(csv ? 'text/csv; charset=utf-8' : 'application/x-ndjson');
      res.set('Content-Disposition', `attachment; filename="events.${csv ? 'csv' : 'ndjson'}"`);
    };
    // HEAD (Express routes it here): the headers and nothing read. Node drops a HEAD's body writes
    // and reports each as taken, so the pipeline would read every row, holding a slot, for nothing.
    if (req.method === 'HEAD') {
      setHeaders();
      res.end();
      return;
    }
    // The first page is read before anything is sent: a storage failing there is answered as any
    // request's (503 and the error), where a response already begun could only be cut short.
    const events = withFirstRead(deps.events.export(filter, deps.exportMaxRows, after));
    await events.first;
    setHeaders();
    // Express, the slot, the stalled-reader check, the credential watch and the pipeline's stages
    // each listen for the response's 'close': past Node's default of 10, a warning per export.
    res.setMaxListeners(20);
    // A reader that stopped reading would hold the slot for as long as its connection stays up;
    // cut off, the pipeline ends the reads and 'close' gives the slot back.
    dropStalledReader(res, deps.exportIdleMs, () =>
      deps.logger.info({ idleMs: deps.exportIdleMs }, 'events export cut off: its reader stopped reading'),
    );
    // Signed out or expired mid-export (an export of a million rows takes minutes): cut off, as a
    // tail ends, rather than sent to the end.
    const unwatch = endWithCredential(req, admittedCaller(res), deps.credential, () => {
      deps.logger.info('events export cut off: its credential ended (signed out, or expired)');
      res.destroy();
    });
    // finished, not 'close': a client that left while the rows were counted closed the response
    // before this line, and a 'close' listener added now would never run, leaving the watch on.
    finished(res, unwatch);
    try {
      // pipeline propagates backpressure to storage's pages, and ends the iteration (storage
      // reads no further page) when the client goes away.
      await pipeline(
        Readable.from(events.all),
        csv
          ? csvStream(after ? undefined : CSV_COLUMNS, (event: StoredEvent) => csvCells(view(event)))
          : ndjsonStream(view),
        res,
      );
    } catch (error) {
      // Headers are sent: a failure mid-stream can only cut the response short (the client sees a
      // reset and no final newline). A client that went away is not worth a warning.
      const gone = (error as { code?: unknown }).code === 'ERR_STREAM_PREMATURE_CLOSE';
      deps.logger[gone ? 'debug' : 'warn']({ err: error }, 'events export interrupted');
      res.destroy();
    }
  });

  router.get('/events/:key', async (req, res) => {
    parseQuery(nothing, req.query);
    const detail = await deps.detail(req.params.key);
    if (!detail) throw new AppError('NOT_FOUND', 'no stored event with this key');
    res.json(toEventDetailView(detail) satisfies AdminEventDetailView);
  });

  const recipientsSchema = recipientsQuery(deps);
  router.get('/events/:key/recipients', async (req, res) => {
    const { limit, cursor } = parseQuery(recipientsSchema, req.query);
    const event = await deps.events.get(req.params.key);
    if (!event) throw new AppError('NOT_FOUND', 'no stored event with this key');
    const page = await deps.recipients.page(
      event,
      limit,
      cursor === undefined ? undefined : decodeUserCursor(cursor),
    );
    res.json({
      items: page.userIds,
      nextCursor: page.next === undefined ? null : encodeUserCursor(page.next),
    } satisfies AdminPageView<string>);
  });

  const trayChangesSchema = trayChangesQuery(deps);
  router.get('/events/:key/tray-changes', async (req, res) => {
    const { limit, cursor } = parseQuery(trayChangesSchema, req.query);
    if (!(await deps.events.get(req.params.key)))
      throw new AppError('NOT_FOUND', 'no stored event with this key');
    const page = await deps.removalChanges.page(
      req.params.key,
      limit,
      cursor === undefined ? undefined : decodeRecordCursor(cursor),
    );
    res.json({
      items: page.items,
      nextCursor: page.next === undefined ? null : encodeRecordCursor(page.next),
    } satisfies AdminPageView<TrayChangeView>);
  });

  return router;
}

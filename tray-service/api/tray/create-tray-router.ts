import { Router, type Request, type RequestHandler, type Response } from 'express';
import { AppError } from '../../../shared/errors/app-error.ts';
import { methodNotAllowed } from '../../../shared/http/error-middleware.ts';
import type { TrayRecordDoc, TrayVerb } from '../../../shared/tray/tray-record.ts';
import type { MessageRenderer } from '../../messages/message-renderer.ts';
import type { ReadStateRepository } from '../../storage/mongodb/read-state-repository.ts';
import type { RecordQueries } from '../../storage/mongodb/record-queries.ts';
import { callerId } from '../auth/require-user.ts';
import { jsonBody } from '../http/require-json.ts';
import { parseInput } from '../http/parse-input.ts';
import { createCountCache } from './count-cache.ts';
import { toNotificationRecord } from './to-notification-record.ts';
import { historyV2Query, historyV3Query, readBody } from './tray-inputs.ts';

export interface TrayRouterDeps {
  records: RecordQueries;
  readState: ReadStateRepository;
  messages: MessageRenderer;
  pageSize: number;
  now: () => number;
  /** Auth and rate limit, run before every tray route. */
  guard: RequestHandler[];
  /** After a delete-all at `at` (live streams are told, docs/live-tray.md). */
  onCleared?: (userId: string, at: number) => Promise<void>;
  /** After a last-read (live streams recount). */
  onLastRead?: (userId: string) => Promise<void>;
}

/** How long a user's record count is reused for `totalPages` (see count-cache.ts). */
const COUNT_TTL_MS = 5_000;

/** v2 has no mention support (docs/contract.md#tray); `mentreact` is a reaction to a comment, not a mention, so v2 keeps it. */
export const V2_EXCLUDED_VERBS: readonly TrayVerb[] = ['mention'];

/** Paths relative to the /notifications mount. */
export const trayPaths = [
  '/v3',
  '/v3/history',
  '/v2/history',
  '/v3/mark-all-as-read',
  '/v2/last-read',
  '/v2/read',
  '/v3/delete-all',
];

function renderPage(
  req: Request,
  res: Response,
  messages: MessageRenderer,
  locale: string | undefined,
  rows: TrayRecordDoc[],
) {
  const chosen = messages.negotiate(locale, req.get('accept-language'));
  res.set('Content-Language', chosen).vary('Accept-Language');
  return rows.map((row) => toNotificationRecord(row, messages.render(row, chosen)));
}

/** The tray endpoints (docs/contract.md#tray), v2 history included. */
export function createTrayRouter(deps: TrayRouterDeps): Router {
  const router = Router();
  const { records, readState, messages, pageSize, now } = deps;
  const totalPages = (count: number) => Math.ceil(count / pageSize);
  const counts = createCountCache(COUNT_TTL_MS);
  // JSON keeps the user id and the version apart whatever characters the id contains.
  const countKey = (userId: string, version: 'v2' | 'v3') => JSON.stringify([userId, version]);

  router
    .route('/v3')
    .get(...deps.guard, async (_req, res) => {
      const userId = callerId(res);
      const lastReadAt = await readState.lastReadAt(userId);
      res.json({ data: { totalUnreadCount: await records.countUnread(userId, lastReadAt, now()) } });
    })
    .all(methodNotAllowed(['GET']));

  router
    .route('/v3/history')
    .get(...deps.guard, async (req, res) => {
      const query = parseInput(historyV3Query, req.query, 'query', ['startAfter']);
      const userId = callerId(res);
      const at = now();
      const [page, count] = await Promise.all([
        records.pageAfter(userId, query.startAfter, pageSize, at),
        counts.get(countKey(userId, 'v3'), at, () => records.count(userId, at)),
      ]);
      const data = renderPage(req, res, messages, query.locale, page.records);
      res.json({ totalPages: totalPages(count), nextPage: page.nextPage, data });
    })
    .all(methodNotAllowed(['GET']));

  router
    .route('/v2/history')
    .get(...deps.guard, async (req, res) => {
      const query = parseInput(historyV2Query, req.query, 'query');
      const userId = callerId(res);
      const at = now();
      const [rows, count] = await Promise.all([
        records.pageNumber(userId, query.page ?? 1, pageSize, at, V2_EXCLUDED_VERBS),
        counts.get(countKey(userId, 'v2'), at, () => records.count(userId, at, V2_EXCLUDED_VERBS)),
      ]);
      res.json({ totalPages: totalPages(count), data: renderPage(req, res, messages, query.locale, rows) });
    })
    .all(methodNotAllowed(['GET']));

  router
    .route('/v3/mark-all-as-read')
    .get(...deps.guard, async (_req, res) => {
      const marked = await records.markAllRead(callerId(res));
      res.json({ data: { message: `marked ${marked} notification${marked === 1 ? '' : 's'} as read` } });
    })
    .all(methodNotAllowed(['GET']));

  router
    .route('/v2/last-read')
    .post(...deps.guard, async (_req, res) => {
      await readState.markLastRead(callerId(res), now());
      await deps.onLastRead?.(callerId(res));
      res.json({ data: 'success' });
    })
    .all(methodNotAllowed(['POST']));

  router
    .route('/v2/read')
    .post(...deps.guard, ...jsonBody(), async (req, res) => {
      const body = parseInput(readBody, req.body ?? {}, 'body');
      const found = await records.markRead(callerId(res), body.verb, body.targetId, now());
      if (!found) throw new AppError('NOT_FOUND', `no ${body.verb} notification for target ${body.targetId}`);
      res.json({ data: 'success' });
    })
    .all(methodNotAllowed(['POST']));

  router
    .route('/v3/delete-all')
    .delete(...deps.guard, async (_req, res) => {
      const userId = callerId(res);
      const at = now();
      await records.deleteAll(userId);
      await deps.onCleared?.(userId, at);
      counts.forget(JSON.stringify([userId]).slice(0, -1));
      res.json({ data: 'success' });
    })
    .all(methodNotAllowed(['DELETE']));

  return router;
}

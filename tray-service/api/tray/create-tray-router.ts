import { Router, type Request, type RequestHandler, type Response } from 'express';
import { AppError } from '../../../shared/errors/app-error.ts';
import { methodNotAllowed, refuseHead } from '../../../shared/http/error-middleware.ts';
import type { InboxState } from '../../domain/inbox-state.ts';
import type { TrayRecord } from '../../domain/tray-record.ts';
import type { MessageRenderer } from '../../messages/message-renderer.ts';
import type { TrayStorage } from '../../storage/port.ts';
import { deleteAll } from '../../use-cases/delete-all.ts';
import type { HistoryPages } from '../../use-cases/history-page.ts';
import { inboxCounts } from '../../use-cases/inbox-counts.ts';
import { markLastRead } from '../../use-cases/last-read.ts';
import { markAll } from '../../use-cases/mark-all.ts';
import { markRead } from '../../use-cases/mark-read.ts';
import type { TrayChanges } from '../../use-cases/tray-changes.ts';
import { callerId } from '../../http/auth/require-user.ts';
import { admitted, admittedBeforeError } from '../../http/rate-limit/limit-per-user.ts';
import { jsonBody } from '../../http/require-json.ts';
import { noBody, noInput } from '../../http/no-input.ts';
import { noQuery } from '../../http/no-query.ts';
import { parseInput } from '../../http/parse-input.ts';
import { toNotificationRecord } from '../../http/to-notification-record.ts';
import {
  historyV2Query,
  historyV3Query,
  readBody,
  type DataStringBody,
  type HistoryV2Page,
  type HistoryV3Page,
  type MarkAllBody,
  type UnreadCountBody,
} from '../../http/api-schema/tray-schemas.ts';

export { V2_EXCLUDED_VERBS } from '../../use-cases/history-page.ts';

export interface TrayRouterDeps {
  storage: Pick<TrayStorage, 'records' | 'lastRead' | 'clears' | 'inbox' | 'deletedUsers'>;
  messages: MessageRenderer;
  /** The history pages (createHistoryPages), shared with the inbox's router, which changes their totals. */
  pages: HistoryPages;
  now: () => number;
  /** Auth and rate limit, run before every tray route that changes anything. */
  guard: RequestHandler[];
  /**
   * The same for the routes that only read, whose storage read may overlap the count of their
   * call (limitPerUserAhead): each awaits `admitted(res)` before it answers.
   */
  readGuard: RequestHandler[];
  /** Where read marks, delete-alls and last-reads are announced (live streams, docs/live-tray.md). */
  changes?: Pick<TrayChanges, 'markedRead' | 'cleared' | 'lastRead'>;
}

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
  rows: readonly (TrayRecord & Partial<InboxState>)[],
) {
  const chosen = messages.negotiate(locale, req.get('accept-language'));
  res.set('Content-Language', chosen).vary('Accept-Language');
  return rows.map((row) => toNotificationRecord(row, messages.render(row, chosen)));
}

/** The tray endpoints (docs/contract.md#tray), v2 history included: HTTP over the tray's use cases. */
export function createTrayRouter(deps: TrayRouterDeps): Router {
  const router = Router();
  const { storage, messages, now, changes, pages } = deps;

  router
    .route('/v3')
    .get(...deps.readGuard, ...noInput(), async (_req, res) => {
      const counts = await inboxCounts(storage, callerId(res), now());
      await admitted(res);
      res.json({ data: counts } satisfies UnreadCountBody);
    })
    .all(methodNotAllowed(['GET', 'HEAD']));

  router
    .route('/v3/history')
    .get(...deps.readGuard, ...noBody(), async (req, res) => {
      const query = parseInput(historyV3Query, req.query, 'query', ['startAfter']);
      const { startAfter, view = 'inbox' } = query;
      const page = await pages.v3(callerId(res), { startAfter, view }, now());
      await admitted(res);
      const data = renderPage(req, res, messages, query.locale, page.records);
      res.json({ totalPages: page.totalPages, nextPage: page.nextPage, data } satisfies HistoryV3Page);
    })
    .all(methodNotAllowed(['GET', 'HEAD']));

  router
    .route('/v2/history')
    .get(...deps.readGuard, ...noBody(), async (req, res) => {
      const query = parseInput(historyV2Query, req.query, 'query');
      const page = await pages.v2(callerId(res), query.page ?? 1, now());
      await admitted(res);
      res.json({
        totalPages: page.totalPages,
        data: renderPage(req, res, messages, query.locale, page.records),
      } satisfies HistoryV2Page);
    })
    .all(methodNotAllowed(['GET', 'HEAD']));

  // A GET that changes the tray (the contract makes it one): a HEAD must not (refuseHead).
  router
    .route('/v3/mark-all-as-read')
    .get(refuseHead, ...deps.guard, ...noInput(), async (_req, res) => {
      const marked = await markAll(storage, changes, callerId(res), now());
      res.json({
        data: { message: `marked ${marked} notification${marked === 1 ? '' : 's'} as read` },
      } satisfies MarkAllBody);
    })
    .all(methodNotAllowed(['GET']));

  router
    .route('/v2/last-read')
    .post(...deps.guard, ...noInput(), async (_req, res) => {
      await markLastRead(storage, changes, callerId(res), now());
      res.json({ data: 'success' } satisfies DataStringBody);
    })
    .all(methodNotAllowed(['POST']));

  router
    .route('/v2/read')
    .post(...deps.guard, ...jsonBody(), noQuery, async (req, res) => {
      const body = parseInput(readBody, req.body ?? {}, 'body');
      const found = await markRead(storage, changes, {
        userId: callerId(res),
        verb: body.verb,
        targetId: body.targetId,
        now: now(),
      });
      if (!found) throw new AppError('NOT_FOUND', `no ${body.verb} notification for target ${body.targetId}`);
      res.json({ data: 'success' } satisfies DataStringBody);
    })
    .all(methodNotAllowed(['POST']));

  router
    .route('/v3/delete-all')
    .delete(...deps.guard, ...noInput(), async (_req, res) => {
      const userId = callerId(res);
      try {
        await deleteAll(storage, changes, userId, now());
      } finally {
        // Also after a failure: the records may be gone already (the clear's time is written after).
        pages.forget(userId);
      }
      res.json({ data: 'success' } satisfies DataStringBody);
    })
    .all(methodNotAllowed(['DELETE']));

  // A read that went ahead of its count and failed still answers after it (limitPerUserAhead).
  router.use(admittedBeforeError);
  return router;
}

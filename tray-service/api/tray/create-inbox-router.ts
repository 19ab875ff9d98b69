import { Router, type RequestHandler } from 'express';
import { methodNotAllowed } from '../../../shared/http/error-middleware.ts';
import type { Mute } from '../../domain/mute.ts';
import type { InboxMark, TrayStorage } from '../../storage/port.ts';
import type { HistoryPages } from '../../use-cases/history-page.ts';
import { listMutes } from '../../use-cases/list-mutes.ts';
import { markInbox } from '../../use-cases/mark-inbox.ts';
import { putMute } from '../../use-cases/put-mute.ts';
import { removeMute } from '../../use-cases/remove-mute.ts';
import type { TrayChanges } from '../../use-cases/tray-changes.ts';
import { callerId } from '../../http/auth/require-user.ts';
import { admitted, admittedBeforeError } from '../../http/rate-limit/limit-per-user.ts';
import { noInput } from '../../http/no-input.ts';
import { noQuery } from '../../http/no-query.ts';
import { jsonBody } from '../../http/require-json.ts';
import { RECORDS_BODY_LIMIT_KB } from '../../http/api-schema/body-limit.ts';
import { parseInput } from '../../http/parse-input.ts';
import {
  archiveBody,
  idsBody,
  muteTargetInput,
  muteTargetQuery,
  putMuteBody,
  seenBody,
  snoozeBody,
  type MuteBody,
  type MutesBody,
  type RemovedBody,
  type UpdatedBody,
} from '../../http/api-schema/inbox-schemas.ts';
import { emptyQuery } from '../../http/api-schema/tray-schemas.ts';

export interface InboxRouterDeps {
  storage: Pick<TrayStorage, 'inbox' | 'engine' | 'deletedUsers'>;
  /** The history pages' memoised totals, forgotten when a mark moves records between views. */
  pages: Pick<HistoryPages, 'forget'>;
  now: () => number;
  /** Auth and rate limit, run before every route that changes anything. */
  guard: RequestHandler[];
  /** The same for the routes that only read (see TrayRouterDeps.readGuard). */
  readGuard: RequestHandler[];
  /** Where marks are announced (live streams, docs/live-tray.md). */
  changes?: Pick<TrayChanges, 'inboxMarked'>;
  /** TRAY_RETENTION_DAYS: ended mute spans are kept as long (put-mute.ts), and no snooze reaches past it. */
  retentionDays: number;
}

/** Paths relative to the /notifications mount. */
export const inboxPaths = [
  '/v3/records/seen',
  '/v3/records/archive',
  '/v3/records/unarchive',
  '/v3/records/snooze',
  '/v3/records/unsnooze',
  '/v3/mutes',
];

const publicMute = ({ targetType, targetId, createdAt, until }: Mute) => ({
  targetType,
  targetId,
  createdAt,
  until,
});

/** The body's mark of each POST records/<kind>, parsed (markInbox judges a snooze's until). */
const marks: Record<string, (body: unknown) => InboxMark> = {
  seen: (raw) => ({ kind: 'seen', ids: parseInput(seenBody, raw, 'body').ids ?? 'all' }),
  archive(raw) {
    const body = parseInput(archiveBody, raw, 'body');
    return { kind: 'archive', ids: body.ids ?? 'all', ...(body.readOnly ? { readOnly: true } : {}) };
  },
  unarchive: (raw) => ({ kind: 'unarchive', ids: parseInput(idsBody, raw, 'body').ids }),
  snooze(raw) {
    const body = parseInput(snoozeBody, raw, 'body');
    return { kind: 'snooze', ids: body.ids, until: body.until };
  },
  unsnooze: (raw) => ({ kind: 'unsnooze', ids: parseInput(idsBody, raw, 'body').ids }),
};

/**
 * The inbox's marks and mutes (docs/tray-api.md#the-inbox): HTTP over their use cases. Every input
 * is parsed whole before a use case runs, and the use cases judge its times against the clock
 * before they change anything (InvalidUntilError, answered 400), so a bad body changes nothing.
 */
export function createInboxRouter(deps: InboxRouterDeps): Router {
  const router = Router();
  const { storage, now, changes } = deps;

  for (const [kind, toMark] of Object.entries(marks)) {
    router
      .route(`/v3/records/${kind}`)
      // 100 ids of the longest keys are over the default limit (body-limit.ts).
      .post(...deps.guard, ...jsonBody(`${RECORDS_BODY_LIMIT_KB}kb`), noQuery, async (req, res) => {
        const at = now();
        const userId = callerId(res);
        const mark = toMark(req.body ?? {});
        const updated = await markInbox(storage, changes, {
          userId,
          mark,
          now: at,
          retentionDays: deps.retentionDays,
        }).catch((error: unknown) => {
          // A mark that failed part-way (MongoDB writes record by record) may have moved records
          // between views already.
          deps.pages.forget(userId);
          throw error;
        });
        if (updated > 0) deps.pages.forget(userId);
        res.json({ data: { updated } } satisfies UpdatedBody);
      })
      .all(methodNotAllowed(['POST']));
  }

  router
    .route('/v3/mutes')
    .get(...deps.readGuard, ...noInput(), async (_req, res) => {
      const mutes = await listMutes(storage, callerId(res), now());
      await admitted(res);
      res.json({ data: mutes.map(publicMute) } satisfies MutesBody);
    })
    .put(...deps.guard, ...jsonBody(), noQuery, async (req, res) => {
      const body = parseInput(putMuteBody, req.body ?? {}, 'body');
      const target = { targetType: body.targetType, targetId: body.targetId };
      const until = body.until ?? null;
      const mute = await putMute(storage, {
        userId: callerId(res),
        target,
        until,
        now: now(),
        retentionDays: deps.retentionDays,
      });
      res.json({ data: publicMute(mute) } satisfies MuteBody);
    })
    .delete(...deps.guard, ...jsonBody(), async (req, res) => {
      // A JSON body, or query parameters for clients whose DELETE carries no body (or `{}`, as
      // some send with every call); not both, since which of the two names the mute to remove
      // could not be known.
      const body: unknown = req.body;
      const emptyBody =
        typeof body === 'object' && body !== null && !Array.isArray(body) && Object.keys(body).length === 0;
      const byQuery = body === undefined || (emptyBody && Object.keys(req.query).length > 0);
      if (!byQuery) parseInput(emptyQuery, req.query, 'query');
      const target = byQuery
        ? parseInput(muteTargetQuery, req.query, 'query')
        : parseInput(muteTargetInput, body, 'body');
      const removed = await removeMute(storage, {
        userId: callerId(res),
        target,
        now: now(),
        retentionDays: deps.retentionDays,
      });
      res.json({ data: { removed } } satisfies RemovedBody);
    })
    .all(methodNotAllowed(['GET', 'HEAD', 'PUT', 'DELETE']));

  // A read that went ahead of its count and failed still answers after it (limitPerUserAhead).
  router.use(admittedBeforeError);
  return router;
}

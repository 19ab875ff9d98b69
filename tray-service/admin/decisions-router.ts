import { Router } from 'express';
import { toDecisionView } from '../domain/decision-doc.ts';
import type { DecisionsFilter, DecisionsPort } from '../storage/port.ts';
import { decodeListCursor, encodeListCursor } from '../domain/page-cursor.ts';
import { decisionsQuery } from './api-schema/admin-inputs.ts';
import type { AdminPageView, ModerationDecisionView } from './api-schema/admin-outputs.ts';
import { parseQuery, requireOrderedRange } from './parse-query.ts';

export interface DecisionsRouterDeps {
  decisions: DecisionsPort;
  defaultLimit: number;
  maxLimit: number;
}

/** GET /admin/moderation/decisions: newest first, the same paging as /admin/events. */
export function createDecisionsRouter(deps: DecisionsRouterDeps): Router {
  const router = Router();
  const schema = decisionsQuery(deps);

  router.get('/moderation/decisions', async (req, res) => {
    const { limit, cursor, ...rest } = parseQuery(schema, req.query);
    requireOrderedRange(rest);
    const filter: DecisionsFilter = Object.fromEntries(
      Object.entries(rest).filter(([, v]) => v !== undefined),
    );
    // A cursor continues the list and filter it was made for (domain/page-cursor.ts).
    const scope = { list: 'decisions', filter } as const;
    const page = await deps.decisions.list(
      filter,
      limit,
      cursor === undefined ? undefined : decodeListCursor(cursor, scope),
    );
    res.json({
      items: page.items.map(toDecisionView),
      nextCursor: page.next ? encodeListCursor(page.next, scope) : null,
    } satisfies AdminPageView<ModerationDecisionView>);
  });
  return router;
}

import { Router } from 'express';
import { z } from 'zod';
import { deliveryStates, toDecisionView } from '../domain/decision-doc.ts';
import type { DecisionsFilter, DecisionsPort } from '../storage/port.ts';
import { moderationActions } from '../domain/moderation-action.ts';
import { decodeCursor, encodeCursor } from '../domain/page-cursor.ts';
import { isoTime, nonEmpty, pageLimit, parseQuery, requireOrderedRange } from './parse-query.ts';

export interface DecisionsRouterDeps {
  decisions: DecisionsPort;
  defaultLimit: number;
  maxLimit: number;
}

/** GET /admin/moderation/decisions: newest first, the same paging as /admin/events. */
export function createDecisionsRouter(deps: DecisionsRouterDeps): Router {
  const router = Router();
  const schema = z
    .object({
      rule: nonEmpty('a rule name').optional(),
      action: z.enum(moderationActions, { error: `expected ${moderationActions.join(' or ')}` }).optional(),
      userId: nonEmpty('a user id').optional(),
      eventKey: nonEmpty('a stored event key').optional(),
      delivery: z
        .enum(deliveryStates, {
          error: 'expected off, pending, delivered or failed',
        })
        .optional(),
      since: isoTime.optional(),
      until: isoTime.optional(),
      limit: pageLimit(deps.defaultLimit, deps.maxLimit),
      cursor: z.string().optional(),
    })
    .strict();

  router.get('/moderation/decisions', async (req, res) => {
    const { limit, cursor, ...rest } = parseQuery(schema, req.query);
    requireOrderedRange(rest);
    const filter: DecisionsFilter = Object.fromEntries(
      Object.entries(rest).filter(([, v]) => v !== undefined),
    );
    const page = await deps.decisions.list(
      filter,
      limit,
      cursor === undefined ? undefined : decodeCursor(cursor),
    );
    res.json({
      items: page.items.map(toDecisionView),
      nextCursor: page.next ? encodeCursor(page.next) : null,
    });
  });
  return router;
}

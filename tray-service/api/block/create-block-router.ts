import { Router, type RequestHandler } from 'express';
import { AppError, invalidQueryToken } from '../../../shared/errors/app-error.ts';
import { methodNotAllowed } from '../../../shared/http/error-middleware.ts';
import type { BlockList } from '../../use-cases/block-list.ts';
import { callerId } from '../../http/auth/require-user.ts';
import { parseInput } from '../../http/parse-input.ts';
import { jsonBody } from '../../http/require-json.ts';
import {
  blockListBody,
  blockMemberBody,
  unblockMemberBody,
  checkListQuery,
  type BlockListPage,
  type BlockStatusBody,
  type CheckListBody,
} from '../../http/api-schema/block-schemas.ts';
import { noBody } from '../../http/no-input.ts';
import { noQuery } from '../../http/no-query.ts';

export interface BlockRouterDeps {
  blocks: BlockList;
  enabled: boolean;
  guard: RequestHandler[];
}

export const blockPaths = ['', '/', '/members'];

/**
 * The legacy block list, a deprecated beta (docs/contract.md#block-list-legacy-beta-deprecated). Its
 * Deprecation and Sunset headers are set by the app ahead of the address refusal (create-tray-api.ts),
 * so every block answer carries them.
 */
export function createBlockRouter(deps: BlockRouterDeps): Router {
  const router = Router();
  if (!deps.enabled) {
    router.use(() => {
      throw new AppError('GONE', 'the block list beta was removed on 28 February 2024; use its replacement');
    });
    return router;
  }
  const { blocks } = deps;

  router
    .route('/members')
    .post(...deps.guard, ...jsonBody(), noQuery, async (req, res) => {
      const { blockUserId } = parseInput(blockMemberBody, req.body ?? {}, 'body');
      if ((await blocks.block(callerId(res), blockUserId)) === 'self')
        throw new AppError('VALIDATION', 'blockUserId: a user cannot block themselves');
      res.json({ status: 'success' } satisfies BlockStatusBody);
    })
    .delete(...deps.guard, ...jsonBody(), noQuery, async (req, res) => {
      const { blockUserId } = parseInput(unblockMemberBody, req.body ?? {}, 'body');
      await blocks.unblock(callerId(res), blockUserId);
      res.json({ status: 'success' } satisfies BlockStatusBody);
    })
    .get(...deps.guard, ...noBody(), async (req, res) => {
      const { checkList } = parseInput(checkListQuery, req.query, 'query');
      const blocked = await blocks.check(callerId(res), checkList);
      // fromEntries defines own properties, so an id like "__proto__" stays a plain key.
      res.json(Object.fromEntries(blocked) satisfies CheckListBody);
    })
    .all(methodNotAllowed(['GET', 'HEAD', 'POST', 'DELETE']));

  router
    .route('/')
    .post(...deps.guard, ...jsonBody(), noQuery, async (req, res) => {
      const { paginationToken } = parseInput(blockListBody, req.body ?? {}, 'body', ['paginationToken']);
      const page = await blocks.page(callerId(res), paginationToken ?? undefined);
      // Another user's cursor is as invalid as a malformed one, and says nothing about that list.
      if (page === 'foreign') throw invalidQueryToken();
      res.json(page satisfies BlockListPage);
    })
    .all(methodNotAllowed(['POST']));

  return router;
}

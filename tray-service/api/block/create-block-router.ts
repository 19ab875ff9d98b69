import { Router, type RequestHandler } from 'express';
import { AppError, invalidQueryToken } from '../../../shared/errors/app-error.ts';
import { methodNotAllowed } from '../../../shared/http/error-middleware.ts';
import type { BlockListRepository } from '../../storage/mongodb/block-list-repository.ts';
import { callerId } from '../auth/require-user.ts';
import { parseInput } from '../http/parse-input.ts';
import { jsonBody } from '../http/require-json.ts';
import { blockListBody, blockMemberBody, checkListQuery } from './block-inputs.ts';
import { deprecationHeaders } from './deprecation-headers.ts';

/** 4.2 rule 2. */
export const BLOCK_PAGE_SIZE = 20;

export interface BlockRouterDeps {
  blocks: BlockListRepository;
  networkId: string;
  enabled: boolean;
  guard: RequestHandler[];
}

export const blockPaths = ['', '/', '/members'];

/** The owner's side of an entry (docs/contract.md#block-list-legacy-beta-deprecated): network and owner, so one store can serve several networks. */
export const netidUid = (networkId: string, ownerUserId: string) => `${networkId}_${ownerUserId}`;

/** The legacy block list, a deprecated beta (docs/contract.md#block-list-legacy-beta-deprecated). */
export function createBlockRouter(deps: BlockRouterDeps): Router {
  const router = Router();
  router.use(deprecationHeaders);
  if (!deps.enabled) {
    router.use(() => {
      throw new AppError('GONE', 'the block list beta was removed on 28 February 2024; use its replacement');
    });
    return router;
  }
  const { blocks } = deps;
  const owner = (userId: string) => netidUid(deps.networkId, userId);

  router
    .route('/members')
    .post(...deps.guard, ...jsonBody(), async (req, res) => {
      const { blockUserId } = parseInput(blockMemberBody, req.body ?? {}, 'body');
      const userId = callerId(res);
      if (blockUserId === userId)
        throw new AppError('VALIDATION', 'blockUserId: a user cannot block themselves');
      await blocks.block(owner(userId), blockUserId);
      res.json({ status: 'success' });
    })
    .delete(...deps.guard, ...jsonBody(), async (req, res) => {
      const { blockUserId } = parseInput(blockMemberBody, req.body ?? {}, 'body');
      // Unblocking someone not blocked is a success too: the end state is what was asked for.
      await blocks.unblock(owner(callerId(res)), blockUserId);
      res.json({ status: 'success' });
    })
    .get(...deps.guard, async (req, res) => {
      const { checkList } = parseInput(checkListQuery, req.query, 'query');
      const blocked = await blocks.blockedAmong(owner(callerId(res)), checkList);
      // fromEntries defines own properties, so an id like "__proto__" stays a plain key.
      res.json(Object.fromEntries(checkList.map((id) => [id, blocked.has(id)])));
    })
    .all(methodNotAllowed(['GET', 'POST', 'DELETE']));

  router
    .route('/')
    .post(...deps.guard, ...jsonBody(), async (req, res) => {
      const { paginationToken } = parseInput(blockListBody, req.body ?? {}, 'body', ['paginationToken']);
      const mine = owner(callerId(res));
      // Another user's cursor is as invalid as a malformed one, and says nothing about that list.
      if (paginationToken && paginationToken.netid_uid !== mine) throw invalidQueryToken();
      res.json(await blocks.page(mine, paginationToken?.blocked_userId, BLOCK_PAGE_SIZE));
    })
    .all(methodNotAllowed(['POST']));

  return router;
}

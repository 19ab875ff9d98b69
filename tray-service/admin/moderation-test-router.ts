import { Router } from 'express';
import { z } from 'zod';
import { jsonBody } from '../http/require-json.ts';
import type { RuleTest } from '../use-cases/test-blocked-words.ts';
import { parseQuery } from './parse-query.ts';

/** Longest text the tester takes: a long post's worth. */
export const MAX_TEST_TEXT = 20_000;

/**
 * POST /admin/moderation/test {text}: what the blocked-words rule, with this instance's list,
 * finds in a text (docs/operations.md#events-console-api). Decides and stores nothing.
 */
export function createModerationTestRouter(test: (text: string) => RuleTest): Router {
  const router = Router();
  const schema = z.object({ text: z.string({ error: 'expected a string' }).max(MAX_TEST_TEXT) }).strict();
  router.post('/moderation/test', ...jsonBody('256kb'), (req, res) => {
    const { text } = parseQuery(schema, req.body ?? {}, 'field');
    res.json(test(text));
  });
  return router;
}

import { Router } from 'express';
import { jsonBody } from '../http/require-json.ts';
import type { RuleTest } from '../use-cases/test-blocked-words.ts';
import { nothing, ruleTestBody } from './api-schema/admin-inputs.ts';
import type { RuleTestResult } from './api-schema/console-outputs.ts';
import { parseQuery } from './parse-query.ts';

export { MAX_TEST_TEXT } from './api-schema/admin-inputs.ts';

/**
 * POST /admin/moderation/test {text}: what the blocked-words rule, with this instance's list,
 * finds in a text (docs/operations.md#events-console-api). Decides and stores nothing.
 */
export function createModerationTestRouter(test: (text: string) => RuleTest): Router {
  const router = Router();
  router.post('/moderation/test', ...jsonBody('256kb'), (req, res) => {
    parseQuery(nothing, req.query);
    const { text } = parseQuery(ruleTestBody, req.body ?? {}, 'field');
    res.json(test(text) satisfies RuleTestResult);
  });
  return router;
}

import type { RequestHandler } from 'express';
import { emptyBody } from './api-schema/tray-schemas.ts';
import { noQuery } from './no-query.ts';
import { parseInput } from './parse-input.ts';
import { jsonBody } from './require-json.ts';

/**
 * The input checks of a call that takes no input: a body must be JSON (415), and there is no query
 * parameter (400 naming them), and the body is `{}` if any (400 naming its first unknown field). A
 * call that took what it was sent for something it ignores could do far more than its caller meant.
 */
export function noInput(): RequestHandler[] {
  return [
    ...jsonBody(),
    noQuery,
    (req, _res, next) => {
      parseInput(emptyBody, req.body ?? {}, 'body');
      next();
    },
  ];
}

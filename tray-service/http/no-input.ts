import type { RequestHandler } from 'express';
import { emptyBody, emptyQuery } from './api-schema/tray-schemas.ts';
import { parseInput } from './parse-input.ts';
import { jsonBody } from './require-json.ts';

/**
 * The input checks of a call that takes no input: a body must be JSON (415), and be `{}` if any
 * (400 naming its first unknown field), and there is no query parameter (400 naming them). A call
 * that took what it was sent for something it ignores could do far more than its caller meant.
 */
export function noInput(): RequestHandler[] {
  return [
    ...jsonBody(),
    (req, _res, next) => {
      parseInput(emptyQuery, req.query, 'query');
      parseInput(emptyBody, req.body ?? {}, 'body');
      next();
    },
  ];
}

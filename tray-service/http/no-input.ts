import type { RequestHandler } from 'express';
import { emptyBody } from './api-schema/tray-schemas.ts';
import { noQuery } from './no-query.ts';
import { parseInput } from './parse-input.ts';
import { jsonBody } from './require-json.ts';

/**
 * The body check of a call whose input is its query (a GET): a body must be JSON (415) and `{}` if
 * any (400 naming its first field). A cursor sent in a GET's body would otherwise be ignored, and
 * the caller would walk page one for ever.
 */
export function noBody(): RequestHandler[] {
  return [...jsonBody(), bodyIsEmpty];
}

const bodyIsEmpty: RequestHandler = (req, _res, next) => {
  parseInput(emptyBody, req.body ?? {}, 'body');
  next();
};

/**
 * The input checks of a call that takes no input: noBody, and no query parameter (400 naming
 * them). A call that took what it was sent for something it ignores could do far more than its
 * caller meant.
 */
export function noInput(): RequestHandler[] {
  return [...jsonBody(), noQuery, bodyIsEmpty];
}

import type { RequestHandler } from 'express';
import { emptyQuery } from './api-schema/tray-schemas.ts';
import { parseInput } from './parse-input.ts';

/**
 * Refuses any query parameter of a call that takes none (400 naming them): a parameter the call
 * would ignore may be one its caller meant to narrow it with (a user id, a target), and must not
 * be answered as if it had been honoured.
 */
export const noQuery: RequestHandler = (req, _res, next) => {
  parseInput(emptyQuery, req.query, 'query');
  next();
};

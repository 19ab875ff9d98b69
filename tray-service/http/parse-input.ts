import type { z } from 'zod';
import { AppError, invalidQueryToken } from '../../shared/errors/app-error.ts';
import { firstIssue } from './first-issue.ts';

/**
 * Validates untrusted input (query, body) before any of it reaches a query: a field of the wrong
 * type, e.g. an object where a string is expected, is a 400 naming that field. A fault in one of
 * `tokenFields` (page cursors) is answered with the platform's 'Query Token is invalid' instead.
 */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  where: string,
  tokenFields: readonly string[] = [],
): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = firstIssue(result.error);
  const top = issue?.path[0];
  if (typeof top === 'string' && tokenFields.includes(top)) throw invalidQueryToken(result.error);
  const field = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : where;
  throw new AppError('VALIDATION', `${field}: ${issue?.message ?? 'invalid value'}`);
}

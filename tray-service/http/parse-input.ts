import type { z } from 'zod';
import { AppError, invalidQueryToken } from '../../shared/errors/app-error.ts';

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
  // An unknown field first: zod reports the required ones it lacks before it, and a misspelt
  // `targetID` is better named as sent than as a missing `targetId`.
  const { issues } = result.error;
  const issue = issues.find((one) => one.code === 'unrecognized_keys') ?? issues[0];
  const top = issue?.path[0];
  if (typeof top === 'string' && tokenFields.includes(top)) throw invalidQueryToken(result.error);
  const field = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : where;
  throw new AppError('VALIDATION', `${field}: ${issue?.message ?? 'invalid value'}`);
}

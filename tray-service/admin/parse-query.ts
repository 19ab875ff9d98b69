import { z } from 'zod';
import { AppError } from '../../shared/errors/app-error.ts';
import { storableText } from '../domain/stored-text.ts';
import { documentedAs } from '../http/api-schema/query-values.ts';
import { firstIssue } from '../http/first-issue.ts';
import { parseIsoTime } from './parse-iso-time.ts';

/** What an input's members are called, and what the input as a whole is named and must be. */
const inputs = {
  'query parameter': { whole: 'query', expected: 'expected query parameters' },
  field: { whole: 'body', expected: 'expected a JSON object' },
  option: { whole: 'options', expected: 'expected options' },
} as const;

/**
 * Validates a query string, a JSON body (`what`: 'field') or a script's options ('option'); a
 * failure is a 400 whose message names the member (docs/contract.md#errors), or the input as a
 * whole when it is no object at all (`body: expected a JSON object`, not zod's own words).
 */
export function parseQuery<S extends z.ZodType>(
  schema: S,
  query: unknown,
  what: keyof typeof inputs = 'query parameter',
): z.infer<S> {
  const result = schema.safeParse(query);
  if (result.success) return result.data;
  const issue = firstIssue(result.error);
  if (issue?.code === 'unrecognized_keys') {
    throw new AppError('VALIDATION', `${issue.keys.join(', ')}: unknown ${what}`);
  }
  const member = issue?.path[0];
  if (member === undefined) {
    const { whole, expected } = inputs[what];
    const message = issue === undefined || issue.code === 'invalid_type' ? expected : issue.message;
    throw new AppError('VALIDATION', `${whole}: ${message}`);
  }
  throw new AppError('VALIDATION', `${String(member)}: ${issue?.message ?? 'invalid'}`);
}

/**
 * The span of an admin time: what every answer can write back, as RFC 3339 (a year of four
 * digits: 10000 would be `+010000-…`) and as epoch ms of a chart's minutes (never negative).
 */
export const EARLIEST_TIME = new Date(0);
const LATEST_TIME = new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999));
const timeSpan = 'expected a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z';

/**
 * An ISO 8601 time that is also a real date (see parseIsoTime: 2026-02-30 is refused, not rolled
 * over) within EARLIEST_TIME and LATEST_TIME.
 */
export const isoTime = z.string({ error: 'expected an ISO 8601 time' }).transform((value, context) => {
  const date = parseIsoTime(value);
  if (date === undefined) context.addIssue({ code: 'custom', message: 'expected an ISO 8601 time' });
  else if (date < EARLIEST_TIME || date > LATEST_TIME)
    context.addIssue({ code: 'custom', message: timeSpan });
  return date ?? new Date(Number.NaN);
});

/**
 * A page size from 1 to `max`, `fallback` when absent. Digits only: the document calls it an
 * integer, and Number() would also read `0x2`, `1e1`, `2.0`, `+2` and ` 2 ` as one.
 */
export const pageLimit = (fallback: number, max: number) => {
  const expected = `expected a whole number from 1 to ${max}`;
  return z
    .string({ error: expected })
    .regex(/^[0-9]{1,16}$/, { error: expected })
    .transform(Number)
    .refine((n) => n >= 1 && n <= max, { error: expected })
    .default(fallback)
    .meta(documentedAs({ default: fallback, type: 'integer', minimum: 1, maximum: max }));
};

/** A `since`/`until` pair must leave room between them: `until` is exclusive. */
export function requireOrderedRange(range: { since?: Date | undefined; until?: Date | undefined }): void {
  if (range.since && range.until && range.since >= range.until) {
    throw new AppError('VALIDATION', 'until: must be later than since');
  }
}

/** Longest accepted filter value (names, ids, keys). */
export const textMaxLength = 200;

/**
 * A filter value: it reaches a storage query, so it is storable text (no U+0000). Each check
 * carries its own message: the schema's `error` would otherwise be theirs too, hiding the limit.
 */
export const nonEmpty = (what: string) =>
  storableText(
    z
      .string({ error: `expected ${what}` })
      .min(1, { error: `expected ${what}` })
      .max(textMaxLength, { error: `expected ${what}, at most ${textMaxLength} characters` }),
  );

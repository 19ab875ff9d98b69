import { z } from 'zod';
import { positiveInt } from '../../shared/config/env-types.ts';
import { AppError } from '../../shared/errors/app-error.ts';
import { storableText } from '../domain/stored-text.ts';
import { parseIsoTime } from './parse-iso-time.ts';

/**
 * Validates a query string (or a JSON body: `what` names its members); a failure is a 400 whose
 * message names the field (docs/contract.md#errors).
 */
export function parseQuery<S extends z.ZodType>(
  schema: S,
  query: unknown,
  what = 'query parameter',
): z.infer<S> {
  const result = schema.safeParse(query);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field =
    issue?.code === 'unrecognized_keys' ? issue.keys.join(', ') : String(issue?.path[0] ?? 'query');
  const message = issue?.code === 'unrecognized_keys' ? `unknown ${what}` : issue?.message;
  throw new AppError('VALIDATION', `${field}: ${message ?? 'invalid'}`);
}

/** An ISO 8601 time that is also a real date (see parseIsoTime: 2026-02-30 is refused, not rolled over). */
export const isoTime = z.string({ error: 'expected an ISO 8601 time' }).transform((value, context) => {
  const date = parseIsoTime(value);
  if (date === undefined) context.addIssue({ code: 'custom', message: 'expected an ISO 8601 time' });
  return date ?? new Date(Number.NaN);
});

/** A page size from 1 to `max`. */
export const pageLimit = (fallback: number, max: number) => positiveInt(fallback, max);

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

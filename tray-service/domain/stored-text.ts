import { z } from 'zod';

/**
 * Whether storage can be asked about this text (an id, a key, a filter value, a page cursor's
 * part). PostgreSQL's text cannot hold U+0000 (what is stored has it replaced, see
 * storage/postgres/without-nul.ts), so text holding one names nothing stored, and a query carrying
 * it fails. A lone UTF-16 surrogate is kept as U+FFFD (the driver's UTF-8, and storable-json.ts
 * for delivered events), so such an id would name another one: `x\uD800` and `x\uDFFF` both
 * `x\uFFFD`. Every input schema that reaches storage refuses both through this one rule, as the
 * caller's mistake (a 400), on every adapter alike.
 */
export const isStorable = (text: string) => !text.includes('\u0000') && text.isWellFormed();

export const NOT_STORABLE = 'expected no U+0000 character and no lone surrogate';

/** `text` with the rule applied (the usual form; a list checked at once uses isStorable). */
export function storableText<T extends z.ZodString>(text: T): T {
  return text.refine(isStorable, { error: NOT_STORABLE });
}

/**
 * A non-empty stored id of at most `max` characters, as the public API takes one. The limit has its
 * own message: without one it would get the schema's, "expected a string".
 */
export const storedId = (max: number) =>
  storableText(
    z
      .string({ error: 'expected a string' })
      .min(1, { error: 'expected a non-empty string' })
      .max(max, { error: `expected a string of at most ${max} characters` }),
  );

import { z } from 'zod';

/**
 * Metadata that makes the document show `jsonSchema` instead of what zod would write: for an input
 * whose wire form zod cannot see (a number or a list sent as query text), parsed by a transform.
 */
export const documentedAs = (jsonSchema: Record<string, unknown>) => ({
  override: ({ jsonSchema: rendered }: { jsonSchema: Record<string, unknown> }) => {
    for (const key of Object.keys(rendered)) Reflect.deleteProperty(rendered, key);
    Object.assign(rendered, jsonSchema);
  },
});

/**
 * A whole number in a query string. A query value is text, so it is parsed here (digits only:
 * no sign, exponent or spaces, which Number() would take); the document calls it an integer, which
 * is how OpenAPI writes a number sent as a query parameter. `fallback` is the default the caller
 * applies when the parameter is absent (documented only: the schema leaves it undefined).
 */
export const wholeNumberQuery = (max: number, min = 0, fallback?: number) =>
  z
    .string({ error: 'expected one whole number' })
    .regex(/^\d{1,16}$/, { error: 'expected a whole number' })
    .transform(Number)
    .refine((n) => n <= max, { error: `expected at most ${max}` })
    .meta(
      documentedAs({
        type: 'integer',
        minimum: min,
        maximum: max,
        ...(fallback === undefined ? {} : { default: fallback }),
      }),
    );

/**
 * A page cursor (`startAfter`): a whole number of up to 16 digits is always one
 * (docs/tray-rules.md#invalid-page-tokens), and one past the largest safe integer, after every
 * record as any such time is, reads as that integer: from the top.
 */
export const cursorQuery = () =>
  z
    .string({ error: 'expected one whole number' })
    .regex(/^\d{1,16}$/, { error: 'expected a whole number' })
    .transform((text) => Math.min(Number(text), Number.MAX_SAFE_INTEGER))
    .meta(documentedAs({ type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER }));

function isLocaleTag(tag: string): boolean {
  try {
    // `pt_BR` is read as `pt-BR` (docs/messages.md).
    return Intl.getCanonicalLocales(tag.replaceAll('_', '-')).length === 1;
  } catch {
    return false;
  }
}

/** The locale of `description`, as a query parameter. */
export const localeQuery = z
  .string({ error: 'expected one locale tag' })
  .max(35, { error: 'expected a locale tag of at most 35 characters' })
  // Empty reads as none, and `*` as Accept-Language's choice; any other must be a BCP 47 tag
  // (one the tray has no messages for still falls back to the default).
  .refine((tag) => tag === '' || tag === '*' || isLocaleTag(tag), {
    error: 'expected a locale tag such as de or pt-BR, or *',
  })
  .optional()
  .meta({
    param: {
      description:
        'Locale of `description`; else Accept-Language, else the default. The chosen one is in Content-Language.',
    },
  });

/**
 * The message of an object schema's own issues: an unknown key by the name a caller knows it by
 * (`kind`: "parameter" for a query, "field" for a body), with the `hints` of any that a caller
 * plausibly sent for another version of the call; anything else (not an object) as `otherwise`.
 * Every input is a strict object: a parameter a call would ignore is refused, never ignored.
 */
export const unknownKeys =
  (kind: 'parameter' | 'field', otherwise: string, hints: Readonly<Record<string, string>> = {}) =>
  (issue: { code?: string; keys?: readonly string[] }) => {
    if (issue.code !== 'unrecognized_keys') return otherwise;
    const keys = issue.keys ?? [];
    const hinted = keys.flatMap((key) => {
      const hint = Object.hasOwn(hints, key) ? hints[key] : undefined;
      return hint === undefined ? [] : [hint];
    });
    return `unknown ${kind} ${keys.join(', ')}${hinted.length > 0 ? ` (${hinted.join('; ')})` : ''}`;
  };

/** The error of a query schema: no query is anything but an object, so only its keys can be wrong. */
export const queryError = (hints?: Readonly<Record<string, string>>) => ({
  error: unknownKeys('parameter', 'expected query parameters', hints),
});

/** The error of a JSON body's schema: an unknown field by its name, anything else not the object. */
export const bodyError = { error: unknownKeys('field', 'expected a JSON object') };

/**
 * Whether a value given as a name (a header, a webhook) looks like a secret pasted into the wrong
 * variable: a Standard Webhooks `whsec_` secret, 20 or more hex digits, or 20 or more Base64
 * characters that mix digits and both cases the way random text does (the kind of character
 * changes at 40% of places or more within the runs between `-` and `_`: about 65% in random
 * Base64, about 25% in a CamelCase name such as `PlatformEventsEU2026`, 15% in a header as its
 * sender spells it, `X-Shopify-Hmac-SHA256`, whose separators end words rather than change kind).
 * Names are words, and a name is written to the start-up log, so such a value is refused, and
 * never repeated, before it gets there.
 */
export function looksLikeSecret(value: string): boolean {
  if (value.startsWith('whsec_')) return true;
  if (value.length < 20) return false;
  if (/^[0-9a-f]+$/i.test(value)) return true;
  const text = value.replace(/=+$/, '');
  if (!/^[A-Za-z0-9+/_-]+$/.test(text) || !/[0-9]/.test(text) || !/[a-z]/.test(text) || !/[A-Z]/.test(text))
    return false;
  const kind = (char: string) =>
    /[a-z]/.test(char) ? 0 : /[A-Z]/.test(char) ? 1 : /[0-9]/.test(char) ? 2 : 3;
  let changes = 0;
  let places = 0;
  for (const run of text.split(/[-_]/)) {
    for (let i = 1; i < run.length; i += 1) if (kind(run[i - 1] ?? '') !== kind(run[i] ?? '')) changes += 1;
    places += Math.max(0, run.length - 1);
  }
  return places > 0 && changes >= 0.4 * places;
}

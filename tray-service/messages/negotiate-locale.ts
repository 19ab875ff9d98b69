/** Header values longer than this are cut: enough for any real browser, bounded work for garbage. */
const maxHeaderLength = 4096;
const maxRanges = 32;
const rangePattern = /^(?:\*|[a-z]{1,8}(?:[-_][a-z0-9]{1,8})*)$/i;
const qPattern = /^q\s*=\s*(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/i;

function canonical(tag: string): string | undefined {
  try {
    // `pt_BR` is how POSIX and some clients spell `pt-BR`.
    return Intl.getCanonicalLocales(tag.replaceAll('_', '-'))[0];
  } catch {
    return undefined;
  }
}

/** Accept-Language ranges, best first (RFC 9110, 12.5.4); q=0, malformed parts and tags are skipped. */
export function parseAcceptLanguage(header: string): string[] {
  const ranges: { tag: string; q: number }[] = [];
  for (const part of header.slice(0, maxHeaderLength).split(',').slice(0, maxRanges)) {
    const [tag = '', ...params] = part.split(';').map((piece) => piece.trim());
    if (!rangePattern.test(tag)) continue;
    let q = 1;
    const weight = params.find((param) => /^q\s*=/i.test(param));
    if (weight !== undefined) {
      const match = qPattern.exec(weight);
      if (!match) continue;
      q = Number(match[1]);
    }
    if (q > 0) ranges.push({ tag, q });
  }
  // Array sort is stable: equal weights keep the client's order.
  return ranges.sort((a, b) => b.q - a.q).map((range) => range.tag);
}

/** RFC 4647 lookup: `zh-Hant-TW`, then `zh-Hant`, then `zh`; case-insensitive. */
function lookup(available: readonly string[], tag: string): string | undefined {
  const wanted = canonical(tag);
  if (!wanted) return undefined;
  const subtags = wanted.split('-');
  while (subtags.length > 0) {
    const candidate = subtags.join('-').toLowerCase();
    const found = available.find((locale) => locale.toLowerCase() === candidate);
    if (found) return found;
    subtags.pop();
    // A lone singleton (`x`, `u`) is not a tag of its own.
    if (subtags.at(-1)?.length === 1) subtags.pop();
  }
  return undefined;
}

/** Same language, other region: `pt-PT` or `pt` -> `pt-BR`, better than another language. */
function sibling(available: readonly string[], tag: string): string | undefined {
  const language = canonical(tag)?.split('-')[0]?.toLowerCase();
  return available.find((locale) => locale.split('-')[0]?.toLowerCase() === language);
}

function choose(available: readonly string[], fallback: string, tags: readonly string[]): string | undefined {
  for (const tag of tags) {
    if (tag === '*') return fallback;
    const found = lookup(available, tag);
    if (found) return found;
  }
  for (const tag of tags) {
    const found = tag === '*' ? undefined : sibling(available, tag);
    if (found) return found;
  }
  return undefined;
}

/**
 * The locale of a response: `?locale=` first, then Accept-Language by q-value,
 * then the default. Each source is tried with an exact or shorter tag (`fr-CA` -> `fr`) before
 * another region of the same language (`pt-PT` -> `pt-BR`); a source naming no locale we have
 * passes to the next. `available` holds canonical tags (`pt-BR`), sorted.
 */
export function negotiateLocale(
  available: readonly string[],
  fallback: string,
  query: string | undefined,
  acceptLanguage: string | undefined,
): string {
  const fromQuery = query && query.length <= 64 ? choose(available, fallback, [query.trim()]) : undefined;
  if (fromQuery) return fromQuery;
  const fromHeader = acceptLanguage
    ? choose(available, fallback, parseAcceptLanguage(acceptLanguage))
    : undefined;
  return fromHeader ?? fallback;
}

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

export interface AcceptLanguage {
  /** Ranges with a q-value above 0, best first (RFC 9110, 12.5.4). */
  accepted: string[];
  /**
   * Ranges with q=0, in the client's order: not acceptable, so kept rather than dropped, or a
   * longer tag (`fr-CA`) would shorten into a refused `fr`.
   */
  refused: string[];
}

/** Accept-Language ranges: accepted ones best first, refused ones apart; malformed parts and tags are skipped. */
export function parseAcceptLanguage(header: string): AcceptLanguage {
  const ranges: { tag: string; q: number }[] = [];
  const refused: string[] = [];
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
    else refused.push(tag);
  }
  // Array sort is stable: equal weights keep the client's order.
  return { accepted: ranges.sort((a, b) => b.q - a.q).map((range) => range.tag), refused };
}

/** Whether a source rules a locale out; `?locale=` rules nothing out. */
type Refuses = (locale: string) => boolean;
const refusesNothing: Refuses = () => false;

/**
 * The length of the longest of `ranges` naming `locale`, itself or as its prefix before a `-`
 * (`fr` names `fr` and `fr-CA`, as in RFC 4647 basic filtering); 0 if none does. `*` is left out:
 * it stands for the languages no other range names.
 */
function longestRangeNaming(ranges: readonly string[], locale: string): number {
  const tag = locale.toLowerCase();
  let longest = 0;
  for (const range of ranges) {
    const key = range === '*' ? undefined : canonical(range)?.toLowerCase();
    if (key && (tag === key || tag.startsWith(`${key}-`))) longest = Math.max(longest, key.length);
  }
  return longest;
}

/**
 * A locale is refused when the longest range naming it has q=0 (as RFC 2616, 14.4 weighed a tag:
 * `pt;q=0, pt-BR` still accepts pt-BR; a tie, `fr, fr;q=0`, refuses). A refused `*` refuses only
 * languages the header does not name, and those are never chosen from it: a locale reached from
 * a named range by a shorter tag or another region counts as that range's, and the default as
 * the last resort is no more acceptable than it.
 */
function refusalsOf(header: AcceptLanguage): Refuses {
  if (header.refused.length === 0) return refusesNothing;
  return (locale) => {
    const refused = longestRangeNaming(header.refused, locale);
    return refused > 0 && refused >= longestRangeNaming(header.accepted, locale);
  };
}

/** RFC 4647 lookup: `zh-Hant-TW`, then `zh-Hant`, then `zh`; case-insensitive; refused locales are passed over. */
function lookup(available: readonly string[], tag: string, refuses: Refuses): string | undefined {
  const wanted = canonical(tag);
  if (!wanted) return undefined;
  const subtags = wanted.split('-');
  while (subtags.length > 0) {
    const candidate = subtags.join('-').toLowerCase();
    const found = available.find((locale) => locale.toLowerCase() === candidate && !refuses(locale));
    if (found) return found;
    subtags.pop();
    // A lone singleton (`x`, `u`) is not a tag of its own.
    if (subtags.at(-1)?.length === 1) subtags.pop();
  }
  return undefined;
}

/**
 * Same language and script, other region: `pt-PT` or `pt` -> `pt-BR`, better than another
 * language; not a refused one. The script is the tag's own or its likely one (`zh-TW` is written in
 * Traditional characters, `zh` and `zh-CN` in Simplified): another script is not a region, and a
 * Taiwan reader is not given the Simplified catalogue for one.
 */
function sibling(available: readonly string[], tag: string, refuses: Refuses): string | undefined {
  const wanted = languageAndScript(tag);
  if (wanted === undefined) return undefined;
  return available.find((locale) => languageAndScript(locale) === wanted && !refuses(locale));
}

/**
 * languageAndScript's answers by tag: canonicalising and maximising a tag takes some 6 us, and each
 * negotiation asked it of every catalogue for every range (25-115 us for a browser's header).
 */
const likely = new Map<string, string | undefined>();
const LIKELY_CACHED = 1_024;

/**
 * `zh-Hant`, `pt-Latn`: a tag's language and its script, written or likely (CLDR's likely subtags).
 * None for `und` (no language named), which likely subtags would make English (`und-BR`:
 * Portuguese).
 */
function languageAndScript(tag: string): string | undefined {
  if (likely.has(tag)) return likely.get(tag);
  // Bounded: the tags are a header's (after a clear, the catalogues' own are worked out again).
  if (likely.size >= LIKELY_CACHED) likely.clear();
  const found = likelyLanguageAndScript(tag);
  likely.set(tag, found);
  return found;
}

function likelyLanguageAndScript(tag: string): string | undefined {
  const name = canonical(tag);
  if (name === undefined) return undefined;
  try {
    if (name.split('-')[0]?.toLowerCase() === 'und') return undefined;
    const { language, script } = new Intl.Locale(name).maximize();
    return `${language}-${script ?? ''}`.toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * A range naming only a language (`pt`): it matches every region of that language (RFC 4647 basic
 * filtering), so it takes one in its own place by q, before the ranges ranked below it. A browser
 * set to Portuguese (Portugal) sends `pt-PT,pt;q=0.9,en;q=0.8` and means pt-BR rather than English.
 */
function isBareLanguage(tag: string): boolean {
  return canonical(tag)?.includes('-') === false;
}

/**
 * Whether `range` leads to `locale`: as itself or a longer tag of it (`fr` -> `fr-CA`), by a
 * shorter tag (`fr-CA` -> `fr`) or as another region of its language (`pt-PT` -> `pt-BR`).
 */
function rangeNames(range: string, locale: string): boolean {
  if (range === '*') return false;
  return (
    longestRangeNaming([range], locale) > 0 ||
    lookup([locale], range, refusesNothing) === locale ||
    sibling([locale], range, refusesNothing) === locale
  );
}

/**
 * The first locale `tags` lead to. `wildcard` is what `*` stands for: the default in
 * Accept-Language; undefined for `?locale=`, which takes a locale tag, so there `*` names no locale
 * and passes on to the next source. `refused` are the source's q=0 ranges: with `tags`, the
 * languages it names, which `*` does not stand for.
 */
function choose(
  available: readonly string[],
  tags: readonly string[],
  refuses: Refuses,
  wildcard: string | undefined,
  refused: readonly string[],
): string | undefined {
  // `*` stands for the languages the header does not name (RFC 4647): a default it names has the
  // weight it gave it there (`en;q=0.1, ru;q=0.8, *;q=0.9` prefers ru). A range of the default's
  // language names it whatever the region (`pt` or `pt-PT` names pt-BR), as it would reach it.
  const wildcardNamed =
    wildcard !== undefined &&
    tags.includes('*') &&
    tags.some((tag) => tag !== '*' && sibling([wildcard], tag, refusesNothing) === wildcard);
  for (const tag of tags) {
    if (tag === '*') {
      if (wildcard === undefined) continue;
      if (refuses(wildcard)) {
        // The default the header refused by name (`en;q=0, *`): `*` still accepts every language
        // the header does not name, so the first of those in `available`'s (sorted) order, never
        // the refused default while another is left. A refused locale is named by its refusal.
        const unnamed = available.find(
          (locale) =>
            !tags.some((range) => rangeNames(range, locale)) &&
            !refused.some((range) => rangeNames(range, locale)),
        );
        if (unnamed) return unnamed;
        continue;
      }
      // Not a default the header ranked itself.
      if (wildcardNamed) continue;
      return wildcard;
    }
    const found =
      lookup(available, tag, refuses) ?? (isBareLanguage(tag) ? sibling(available, tag, refuses) : undefined);
    if (found) return found;
  }
  for (const tag of tags) {
    const found = tag === '*' ? undefined : sibling(available, tag, refuses);
    if (found) return found;
  }
  return undefined;
}

/**
 * The locale of a response: `?locale=` first, then Accept-Language by q-value,
 * then the default. Each source is tried with an exact or shorter tag (`fr-CA` -> `fr`) before
 * another region of the same language (`pt-PT` -> `pt-BR`), never reaching a locale the header
 * refused with q=0; a source naming no locale we have passes to the next. `available` holds
 * canonical tags (`pt-BR`), sorted.
 */
export function negotiateLocale(
  available: readonly string[],
  fallback: string,
  query: string | undefined,
  acceptLanguage: string | undefined,
): string {
  const fromQuery =
    query && query.length <= 64
      ? choose(available, [query.trim()], refusesNothing, undefined, [])
      : undefined;
  if (fromQuery) return fromQuery;
  const header = acceptLanguage ? parseAcceptLanguage(acceptLanguage) : undefined;
  const fromHeader = header
    ? choose(available, header.accepted, refusalsOf(header), fallback, header.refused)
    : undefined;
  // The last resort even when the header refused it (nothing acceptable is left): a response needs
  // some language.
  return fromHeader ?? fallback;
}

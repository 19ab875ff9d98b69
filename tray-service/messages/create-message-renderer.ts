import { CatalogueError } from '../../shared/errors/catalogue-error.ts';
import { loadCatalogues, type LoadCataloguesOptions } from './load-catalogues.ts';
import { sanitizeName } from '../domain/sanitize-name.ts';
import { localeDirection } from './isolate-name.ts';
import { messageForRecord } from './message-for-record.ts';
import { DELETED_USER_KEY } from './message-keys.ts';
import type { MessageRenderer } from './message-renderer.ts';
import { negotiateLocale } from './negotiate-locale.ts';

export type MessageRendererOptions = LoadCataloguesOptions;

/** What an entry without placeholders (the deleted user's name) is rendered with. */
const NO_VALUES = { actor1: '', actor2: '', others: 0, community: '', feedOwner: '' } as const;

/**
 * Loads and compiles every catalogue once, at start-up. Throws a CatalogueError naming
 * file and key for a syntax error, an unknown placeholder or helper, or a message missing from the
 * default locale; other locales fall back to the default locale message by message.
 */
export function createMessageRenderer(options: MessageRendererOptions): MessageRenderer {
  const { messages, problems, fallbacks } = loadCatalogues(options);
  if (problems.length > 0) throw new CatalogueError(problems);
  const locales = [...messages.keys()].sort();
  const defaultLocale = options.defaultLocale;
  // Each locale's name for a deleted user, once: it has no placeholder, so it never changes. Kept
  // to one line of plain text as the names it stands in for are.
  const deletedNames = new Map(
    [...messages].map(([locale, catalogue]) => [
      locale,
      sanitizeName(catalogue.get(DELETED_USER_KEY)?.(NO_VALUES) ?? ''),
    ]),
  );

  const directions = new Map(locales.map((locale) => [locale, localeDirection(locale)]));
  // The messages each locale shows in the default locale's text, and so in its direction.
  const borrowed = new Map(locales.map((locale) => [locale, new Set<string>()]));
  for (const { locale, key } of fallbacks) borrowed.get(locale)?.add(key);
  const directionOf = (locale: string) => (key: string) =>
    directions.get(borrowed.get(locale)?.has(key) === true ? defaultLocale : locale) ?? 'ltr';

  return {
    locales,
    defaultLocale,
    negotiate: (query, acceptLanguage) => negotiateLocale(locales, defaultLocale, query, acceptLanguage),
    render(record, locale) {
      // Callers pass a negotiated locale; anything else gets the same matching (`fr-CA` -> `fr`).
      const matched = messages.has(locale)
        ? locale
        : negotiateLocale(locales, defaultLocale, locale, undefined);
      const catalogue = messages.get(matched);
      const { key, values } = messageForRecord(record, deletedNames.get(matched), directionOf(matched));
      const render = catalogue?.get(key);
      if (!render) throw new Error(`no message ${key} for ${locale}`); // unreachable: load checks every key
      return render(values);
    },
  };
}

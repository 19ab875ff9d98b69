import { CatalogueError } from '../../shared/errors/catalogue-error.ts';
import { loadCatalogues, type LoadCataloguesOptions } from './load-catalogues.ts';
import { messageForRecord } from './message-for-record.ts';
import type { MessageRenderer } from './message-renderer.ts';
import { negotiateLocale } from './negotiate-locale.ts';

export type MessageRendererOptions = LoadCataloguesOptions;

/**
 * Loads and compiles every catalogue once, at start-up. Throws a CatalogueError naming
 * file and key for a syntax error, an unknown placeholder or helper, or a message missing from the
 * default locale; other locales fall back to the default locale message by message.
 */
export function createMessageRenderer(options: MessageRendererOptions): MessageRenderer {
  const { messages, problems } = loadCatalogues(options);
  if (problems.length > 0) throw new CatalogueError(problems);
  const locales = [...messages.keys()].sort();
  const defaultLocale = options.defaultLocale;

  return {
    locales,
    defaultLocale,
    negotiate: (query, acceptLanguage) => negotiateLocale(locales, defaultLocale, query, acceptLanguage),
    render(record, locale) {
      // Callers pass a negotiated locale; anything else gets the same matching (`fr-CA` -> `fr`).
      const catalogue =
        messages.get(locale) ?? messages.get(negotiateLocale(locales, defaultLocale, locale, undefined));
      const { key, values } = messageForRecord(record);
      const render = catalogue?.get(key);
      if (!render) throw new Error(`no message ${key} for ${locale}`); // unreachable: load checks every key
      return render(values);
    },
  };
}

import type { MessageFields } from './message-for-record.ts';

/**
 * Renders a record's `description` at read time, in the reader's locale, so fixing a
 * translation fixes old records too. The API depends on this interface only.
 */
export interface MessageRenderer {
  /** Locales with a catalogue, e.g. ['de', 'en', 'es', ...]. */
  readonly locales: readonly string[];
  readonly defaultLocale: string;
  /** Picks a locale from `?locale=` then Accept-Language (q-values), else the default. */
  negotiate(query: string | undefined, acceptLanguage: string | undefined): string;
  /** Plain text, names inserted literally. */
  render(record: MessageFields, locale: string): string;
}

import { z } from 'zod';

/** A BCP 47 tag such as `en` or `pt-BR`, stored in canonical case so it matches catalogue names. */
const locale = (fallback: string) =>
  z
    .string()
    .transform((value, context) => {
      try {
        const [canonical] = Intl.getCanonicalLocales(value);
        if (canonical) return canonical;
      } catch {
        // reported below
      }
      context.addIssue({ code: 'custom', message: 'expected a BCP 47 locale such as en, fr or pt-BR' });
      return z.NEVER;
    })
    .default(fallback);

/** Variables of the tray service's localised messages (docs/messages.md). */
export const trayMessagesShape = {
  /** Locale of `description` when neither `?locale=` nor Accept-Language names a shipped one. */
  DEFAULT_LOCALE: locale('en'),
  /** A directory of `<locale>.json` catalogues that add locales or override messages of shipped ones. */
  TRAY_MESSAGES_DIR: z.string().optional(),
};

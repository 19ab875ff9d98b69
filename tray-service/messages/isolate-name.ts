/** The direction a message's text runs in. */
export type TextDirection = 'ltr' | 'rtl';

// Scripts whose letters are written right to left (bidi class R or AL), as ISO 15924 codes (what
// Intl.Locale names a locale's script by) and as the Unicode script names a pattern matches.
const RTL_SCRIPTS = new Set(['Arab', 'Hebr', 'Syrc', 'Thaa', 'Nkoo', 'Samr', 'Mand', 'Adlm', 'Rohg', 'Yezi']);
const RTL =
  '\\p{Script=Arabic}\\p{Script=Hebrew}\\p{Script=Syriac}\\p{Script=Thaana}\\p{Script=Nko}' +
  '\\p{Script=Samaritan}\\p{Script=Mandaic}\\p{Script=Adlam}\\p{Script=Hanifi_Rohingya}\\p{Script=Yezidi}';
const RTL_LETTER = new RegExp(`(?=\\p{L})[${RTL}]`, 'u');
const LTR_LETTER = new RegExp(`(?![${RTL}])\\p{L}`, 'u');

/** A catalogue's direction, from its locale's likely script (`ar` -> Arab -> right to left). */
export function localeDirection(locale: string): TextDirection {
  try {
    const { script } = new Intl.Locale(locale).maximize();
    return script !== undefined && RTL_SCRIPTS.has(script) ? 'rtl' : 'ltr';
  } catch {
    return 'ltr';
  }
}

/**
 * A name put into a message running in `direction`, wrapped in a first-strong isolate (U+2068 ...
 * U+2069) when it holds a letter written the other way: unwrapped, an Arabic name first in an
 * English message made the whole line right to left where direction comes from the text (Android,
 * iOS, `dir=auto`), and the comma between two such names took their direction, showing them in
 * reverse order. A name in the message's own direction stays as typed, so such messages read
 * exactly as the catalogue writes them. sanitizeName has removed any isolate the name carried, so
 * the pair stays balanced.
 */
export function isolateName(name: string, direction: TextDirection): string {
  const other = direction === 'ltr' ? RTL_LETTER : LTR_LETTER;
  return other.test(name) ? `\u2068${name}\u2069` : name;
}

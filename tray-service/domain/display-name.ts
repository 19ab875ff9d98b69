import { sanitizeName } from './sanitize-name.ts';

/**
 * Format characters (zero-width space, joiners, direction marks, the soft hyphen) and the other
 * characters that draw nothing (Unicode's default-ignorable ones, such as the Hangul fillers and
 * the combining grapheme joiner, and the blank braille pattern): kept in a name, since a ZWJ joins
 * an emoji and a ZWNJ shapes Persian, but invisible on their own.
 */
const invisible = /[\p{Cf}\p{Default_Ignorable_Code_Point}\s\u2800]/gu;

/**
 * The name a record keeps for a user or community: the payload's, or the id when the payload has
 * none or one the messages would show as nothing ("" or spaces: " commented on your post in"; or
 * only invisible characters).
 */
export function nameOrId(name: string | null | undefined, id: string): string {
  return name === undefined || name === null || sanitizeName(name).replace(invisible, '') === '' ? id : name;
}

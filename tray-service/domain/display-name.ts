import { INVISIBLE_CHARACTERS } from './invisible-characters.ts';
import { sanitizeName } from './sanitize-name.ts';

/**
 * What draws nothing (INVISIBLE_CHARACTERS), spaces, and the blank braille pattern: kept in a name,
 * since a ZWJ joins an emoji and a ZWNJ shapes Persian, but invisible on their own.
 */
const invisible = new RegExp(`[${INVISIBLE_CHARACTERS}\\s\\u2800]`, 'gu');

/** Whether a name would show as nothing in a message: "", spaces, or only invisible characters. */
export function showsNothing(name: string): boolean {
  return sanitizeName(name).replace(invisible, '') === '';
}

/**
 * The name a record keeps for a user or community: the payload's, or the id when the payload has
 * none or one the messages would show as nothing ("" or spaces: " commented on your post in"; or
 * only invisible characters).
 */
export function nameOrId(name: string | null | undefined, id: string): string {
  return name === undefined || name === null || showsNothing(name) ? id : name;
}

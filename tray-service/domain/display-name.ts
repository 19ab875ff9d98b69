import { sanitizeName } from './sanitize-name.ts';

/**
 * The name a record keeps for a user or community: the payload's, or the id when the payload has
 * none or one the messages would show as nothing ("" or spaces: " commented on your post in ").
 */
export function nameOrId(name: string | null | undefined, id: string): string {
  return name === undefined || name === null || sanitizeName(name) === '' ? id : name;
}

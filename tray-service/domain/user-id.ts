import { MAX_USER_ID_LENGTH } from './id-limits.ts';

/**
 * Characters no platform user id holds: control characters (C0, DEL and C1: Unicode's Cc; PostgreSQL
 * behind FerretDB cannot even hold U+0000), invisible format characters (Cf: zero-width spaces and
 * joiners, the soft hyphen, the byte order mark, bidi overrides and isolates) and the line and
 * paragraph separators (Zl, Zp). With the last two, `alice\u200B` or `\u202Eecila` would be a user
 * of its own that reads as `alice` in admin views, logs and exports.
 */
const UNUSABLE_CHARACTER = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/**
 * Whether `id` can name a caller (a token's `sub` or `userId` claim). Also refused: an empty id or
 * one of whitespace only (`"   "` names nobody either); one longer than storage can index
 * (id-limits.ts), which would be served its reads and then answered 500 by every write; and one
 * that is not well-formed UTF-16 (a lone surrogate), since storage keeps a lone surrogate as U+FFFD
 * so "a\uD800", "a\uDFFF" and "a\uFFFD" would all read, mark and delete one tray.
 */
export const isUsableUserId = (id: string): boolean =>
  id.trim() !== '' && id.length <= MAX_USER_ID_LENGTH && id.isWellFormed() && !UNUSABLE_CHARACTER.test(id);

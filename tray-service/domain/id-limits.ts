/**
 * The longest ids the tray API takes from its callers, in characters as JavaScript counts them
 * (UTF-16 code units, at most three bytes of UTF-8 each). Storage indexes them, and PostgreSQL's
 * indexes (FerretDB's on it too) refuse an entry over 2,704 bytes with an error, so an id with no
 * bound would answer 500 on every write that stores it. The widest entry joins a user id and a
 * target id (a mute: user, target type, target id and its start); 256 + 512 characters take at
 * most 2,304 bytes, under the limit whatever the characters. The ids an event may carry are
 * shorter still (event-id.ts), so every user an event names can also call the API.
 */

/** A caller's user id (a token's sub or userId claim) and a user id the caller names (the block list). */
export const MAX_USER_ID_LENGTH = 256;

/** A target id a caller names: `POST v2/read`'s and a mute's. */
export const MAX_TARGET_ID_LENGTH = 512;

/**
 * The largest JSON body a call takes by default, in kB (require-json.ts): the largest valid one
 * ({verb, targetId}, a block token, a replay's filter) is far below it. Its own file so the
 * documents that declare the 413 above it read the same number without importing express.
 */
export const BODY_LIMIT_KB = 16;

/**
 * The largest body of POST records/<kind>, in kB: 100 ids (inbox-schemas.ts) of the longest key.
 * A key joins the verb (9 characters at most: tray-verb.ts) and two ids of up to 128 characters
 * (event-id.ts) in which each `_` and `%` is written in 3 (record-key.ts): 779 ASCII characters.
 * An encoder that writes every other character as `\uXXXX` (Python's json.dumps does by default,
 * JSON.stringify does for control characters) takes 6 bytes for each of the 256 id characters:
 * 1,547 bytes a key, about 155 kB for 100 of them with quotes, separators, an indent and a
 * snooze's `until` (80 characters at most). 256 kB takes that with room to spare.
 */
export const RECORDS_BODY_LIMIT_KB = 256;

/**
 * The largest JSON body a call takes by default, in kB (require-json.ts): the largest valid one
 * ({verb, targetId}, a block token, a replay's filter) is far below it. Its own file so the
 * documents that declare the 413 above it read the same number without importing express.
 */
export const BODY_LIMIT_KB = 16;

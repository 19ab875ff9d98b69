/**
 * The most users one user may block. The block list is read page by page and checked 20 ids at a
 * time, so its size costs nothing per call; the limit bounds what one account (a script on a
 * stolen token, at the call rate's 20 a second) can make the store hold. Ten thousand is far past
 * any person's list.
 */
export const MAX_BLOCKED_USERS = 10_000;

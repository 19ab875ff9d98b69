/** Milliseconds in one day: retention periods are configured in days and stored as times. */
export const DAY_MS = 24 * 60 * 60 * 1000;

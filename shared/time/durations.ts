/** Milliseconds in one hour. */
export const HOUR_MS = 60 * 60 * 1000;

/** Milliseconds in one day: retention periods are configured in days and stored as times. */
export const DAY_MS = 24 * HOUR_MS;

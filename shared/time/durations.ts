/** Milliseconds in one minute: the events console's charts count per minute. */
export const MINUTE_MS = 60 * 1000;

/** Milliseconds in one hour. */
export const HOUR_MS = 60 * MINUTE_MS;

/** Milliseconds in one day: retention periods are configured in days and stored as times. */
export const DAY_MS = 24 * HOUR_MS;

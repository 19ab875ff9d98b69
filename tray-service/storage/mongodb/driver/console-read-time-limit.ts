/**
 * Longest the server may run one read of the admin console's lists and counts (maxTimeMS), as
 * PG_STATEMENT_TIMEOUT_MS bounds PostgreSQL's: a filter whose fields are each common but rarely
 * together scans the events over its whole range, and without a limit held one of the pool's
 * connections for minutes. Past it the server answers MaxTimeMSExpired, which reads as storage
 * unavailable (mongo-unavailable.ts): the API answers 503.
 */
export const CONSOLE_READ_MAX_TIME_MS = 30_000;

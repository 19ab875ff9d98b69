/**
 * Socket error codes of a client that cannot reach its server (refused, reset, timed out, no
 * route, no name): the server is unavailable, not the request wrong. Shared by the Redis and the
 * PostgreSQL error mappings, which add their own servers' "not now" answers.
 */
export const UNREACHABLE_SOCKET_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);

import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** The header a failed request's id travels in, both ways. */
export const REQUEST_ID_HEADER = 'X-Request-Id';

/** What a proxy's id may be: a plain token, short, so no caller can forge log lines or fill them. */
const PLAIN_TOKEN = /^[\w.:-]{1,128}$/;

/**
 * The id of a request that failed with a 5xx, logged with the failure and answered in
 * X-Request-Id, so an operator finds the one log line a user's report names: the one a proxy in
 * front gave (its own logs then name it too) when it is a plain token, else a new UUID.
 */
export function requestIdOf(headers: IncomingHttpHeaders): string {
  const given = headers['x-request-id'];
  return typeof given === 'string' && PLAIN_TOKEN.test(given) ? given : randomUUID();
}

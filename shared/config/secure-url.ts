import { z } from 'zod';
import { isLoopbackHost } from './loopback-host.ts';

const SCHEME_PROBLEM =
  'expected an https:// URL (plain http:// only to a loopback host: localhost, 127.0.0.1, [::1])';
const CREDENTIALS_PROBLEM =
  'expected a URL without a user name or password (fetch refuses a URL with credentials on every request)';

/** Why `value` is not a URL the service may send to; undefined when it is one. */
function secureUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return SCHEME_PROBLEM;
  }
  const secure = url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
  if (!secure) return SCHEME_PROBLEM;
  // Every user of these URLs requests them with fetch (the decision webhook; jose's JWKS fetch),
  // which refuses credentials in a URL on each request with an error quoting the URL, password
  // and all: such a URL could only fail, and leak its password into logs. (Redis and PostgreSQL
  // URLs, which do carry passwords, are not of this kind.)
  if (url.username !== '' || url.password !== '') return CREDENTIALS_PROBLEM;
  return undefined;
}

/** True for an https URL, or an http one to a loopback host, with no credentials in it. */
export function isSecureUrl(value: string): boolean {
  return secureUrlProblem(value) === undefined;
}

/**
 * A URL the service sends to or trusts keys from (a JWKS, a decision webhook): https, so nobody
 * on the way can read or replace what travels; plain http only to this machine (local testing).
 * Never with a user name or password in it (see secureUrlProblem); the message never quotes the URL.
 */
export const secureUrl = () =>
  z.string().superRefine((value, context) => {
    const problem = secureUrlProblem(value);
    if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
  });

import { z } from 'zod';
import { isLoopbackHost } from './loopback-host.ts';

/** True for an https URL, or an http one to a loopback host. */
export function isSecureUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && isLoopbackHost(url.hostname);
}

/**
 * A URL the service sends to or trusts keys from (a JWKS, a decision webhook): https, so nobody
 * on the way can read or replace what travels; plain http only to this machine (local testing).
 */
export const secureUrl = () =>
  z.string().refine(isSecureUrl, {
    error: 'expected an https:// URL (plain http:// only to a loopback host: localhost, 127.0.0.1, [::1])',
  });

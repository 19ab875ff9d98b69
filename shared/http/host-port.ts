import { isIP } from 'node:net';

/**
 * `host:port` as it goes in a URL or a message: an IPv6 literal in brackets (`[::1]:8080`), since
 * `::1:8080` is not an address and `new URL('http://::1:8080')` throws.
 */
export function hostPort(host: string, port: number | string): string {
  return `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}

import ipaddr from 'ipaddr.js';

/**
 * Failed authentications (a bad bearer token, an unknown stream ticket, a wrong admin or metrics
 * token) per source address, and the refusal of an address over the limit: the tray counts them in
 * Redis (tray-service/http/rate-limit/failed-auth-limit.ts), the receiver its metrics guesses in
 * memory (memory-failed-auth-limit.ts).
 */
export interface FailedAuthLimit {
  readonly points: number;
  /** Milliseconds this address is still refused on this instance (0: it may try). */
  blockedFor(address: string): number;
  /** Counts one failure; resolves to the milliseconds the address is now refused (0: not yet). */
  failed(address: string): Promise<number>;
}

/**
 * The key of an address: an IPv4 address itself, an IPv6 address by its /64, since one client
 * usually holds a whole /64 and could otherwise take a fresh address for every attempt.
 */
export function addressKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${parsed.toString()}/64`).toString()}/64`;
}

import { parseAddress, type IpAddress } from '../../shared/address/parse-address.ts';
import { cidrContains } from '../../shared/address/parse-cidr.ts';
import type { TrustProxy } from './parse-trust-proxy.ts';

export type ClientAddressResult =
  { readonly ok: true; readonly address: IpAddress } | { readonly ok: false; readonly reason: string };

/**
 * The address the allowlist checks. Without trusted proxies it is the socket's, and X-Forwarded-For
 * is ignored (anyone can send that header). With trusted proxies the header is read from the right
 * (nearest hop first), skipping hops while they are inside the trusted ranges, starting with the
 * socket itself: a connection from outside them is the client, whatever header it sends. Every
 * entry of the header must be a canonical address: a malformed one means a misconfigured or
 * hostile chain, so the request fails closed.
 */
export function clientAddress(
  socketAddress: string | undefined,
  forwardedFor: string | readonly string[] | undefined,
  trust: TrustProxy,
): ClientAddressResult {
  const socket = socketAddress === undefined ? undefined : parseAddress(socketAddress);
  if (!socket) return { ok: false, reason: 'socket address is unknown' };
  if (trust.kind === 'none' || forwardedFor === undefined) return { ok: true, address: socket };
  const trusted = (address: IpAddress) => trust.cidrs.some((cidr) => cidrContains(cidr, address));
  // A direct client: its header is not read at all (not even to refuse a malformed one).
  if (!trusted(socket)) return { ok: true, address: socket };

  const hops: IpAddress[] = [socket];
  const header = typeof forwardedFor === 'string' ? forwardedFor : forwardedFor.join(',');
  const entries = header.split(',').map((entry) => entry.trim());
  for (const entry of entries.reverse()) {
    const address = parseAddress(entry);
    if (!address) return { ok: false, reason: 'X-Forwarded-For holds a malformed address' };
    hops.push(address);
  }
  let index = 0;
  while (index < hops.length - 1 && trusted(hops[index] ?? socket)) {
    index += 1;
  }
  return { ok: true, address: hops[index] ?? socket };
}

import { parseCidr, parseCidrList, type Cidr } from './parse-cidr.ts';

/**
 * Which proxies in front of the receiver may tell it the client's address (X-Forwarded-For).
 * `none`: the socket's address is the client's. `hops`: exactly that many proxies sit in front.
 * `cidrs`: every hop inside these ranges is a proxy of ours.
 */
export type TrustProxy =
  | { readonly kind: 'none' }
  | { readonly kind: 'hops'; readonly hops: number }
  | { readonly kind: 'cidrs'; readonly cidrs: readonly Cidr[] };

const loopback = ['127.0.0.0/8', '::1/128'].map(parseCidr);

/**
 * Parses TRUST_PROXY: `off` (or unset), a hop count 1-10, `loopback`, or a comma-separated list of
 * proxy addresses/CIDRs. "Trust everything" (`true`, `all`, `0.0.0.0/0`, `::/0`) is refused: it
 * would let any client pick the address the allowlist checks.
 */
export function parseTrustProxy(text: string): TrustProxy {
  const value = text.trim().toLowerCase();
  if (value === '' || value === 'off' || value === '0' || value === 'false') return { kind: 'none' };
  if (value === 'true' || value === 'all' || value === '*') {
    throw new Error(
      'trusting every proxy would let any client choose its address; give a hop count, "loopback" or proxy CIDRs',
    );
  }
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > 10) throw new Error(`"${text}" hops: expected a hop count from 1 to 10`);
    return { kind: 'hops', hops };
  }
  const cidrs = value
    .split(',')
    .map((entry) => entry.trim())
    .flatMap((entry) => (entry === 'loopback' ? loopback : parseCidrList(entry)));
  if (cidrs.some((cidr) => cidr.prefix === 0)) {
    throw new Error('a /0 range trusts every address and would let any client choose its address');
  }
  return { kind: 'cidrs', cidrs };
}

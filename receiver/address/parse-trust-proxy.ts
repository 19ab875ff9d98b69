import { parseCidr, type Cidr } from '../../shared/address/parse-cidr.ts';
import { listEntries } from '../../shared/text/list-entries.ts';
import { firstTooWide, showCidr } from '../../shared/address/too-wide.ts';

/**
 * Which proxies in front of the receiver may tell it the client's address (X-Forwarded-For).
 * `none`: the socket's address is the client's. `cidrs`: every hop inside these ranges is a proxy
 * of ours; the header counts only when the connection itself comes from one of them.
 */
export type TrustProxy =
  { readonly kind: 'none' } | { readonly kind: 'cidrs'; readonly cidrs: readonly Cidr[] };

const loopback = ['127.0.0.0/8', '::1/128'].map(parseCidr);

/**
 * Parses TRUST_PROXY: `off` (or unset), `loopback`, or a comma-separated list of proxy
 * addresses/CIDRs. "Trust everything" (`true`, `all`, `0.0.0.0/0`, `::/0`) is refused: it would let
 * any client pick the address the allowlist checks; so is any range wider than one network's
 * (shared/address/too-wide.ts), which does the same for a share of the internet. So is a hop count: it trusts the header
 * whoever connects, and a client reaching the receiver directly could name any address.
 */
export function parseTrustProxy(text: string): TrustProxy {
  const value = text.trim().toLowerCase();
  if (value === '' || value === 'off' || value === '0' || value === 'false') return { kind: 'none' };
  if (value === 'true' || value === 'all' || value === '*') {
    throw new Error(
      'trusting every proxy would let any client choose its address; give "loopback" or the proxies\' addresses or CIDRs',
    );
  }
  if (/^\d+$/.test(value)) {
    throw new Error(
      `"${text.trim()}": a hop count trusts X-Forwarded-For from any client that connects directly; ` +
        "give the proxies' addresses or CIDRs instead (e.g. 10.0.0.0/8 or loopback)",
    );
  }
  const cidrs = listEntries(value).flatMap((entry) => (entry === 'loopback' ? loopback : [parseCidr(entry)]));
  const wide = firstTooWide(cidrs, 'trusts');
  if (wide) {
    throw new Error(
      `"${showCidr(wide.cidr)}" ${wide.reason}: any client there could choose its address; give the proxies' own ranges`,
    );
  }
  return { kind: 'cidrs', cidrs };
}

import { parseCidr, parseCidrList } from '../address/parse-cidr.ts';
import { firstTooWide, showCidr } from '../address/too-wide.ts';
import { parsedWith, positiveInt } from './env-types.ts';
import { listEntries } from '../text/list-entries.ts';

/**
 * TRUST_PROXY of the tray service: `off`, `loopback`, or proxy addresses/CIDRs (as Express's
 * `trust proxy` reads them). X-Forwarded-For then counts only when the connection comes from one
 * of them. A hop count, `true` or a /0 (also one written as an IPv4-mapped IPv6 range) would let
 * any client pick its own address, and a range wider than one network's (shared/address) would
 * let a share of the internet do so. Entries are read as the receiver reads its TRUST_PROXY
 * (parseCidr); the list is handed to Express as written.
 */
export function parseTrayTrustProxy(text: string): string[] {
  const value = text.trim().toLowerCase();
  // `0` is off, as the receiver reads it: one env file may serve both services.
  if (value === '' || value === 'off' || value === 'false' || value === '0') return [];
  const entries = listEntries(value);
  for (const entry of entries) {
    if (entry === 'loopback') continue;
    if (/^\d+$/.test(entry) || entry === 'true' || entry === 'all' || entry === '*') {
      throw new Error(
        `"${entry}" would trust X-Forwarded-For from any client; give the proxies' addresses or CIDRs (e.g. 10.0.0.0/8)`,
      );
    }
    // The receiver's rule (shared/address): canonical forms only, and an IPv4-mapped range read
    // as the IPv4 range it maps, as Express's proxy-addr reads it: `::ffff:0.0.0.0/96` is
    // 0.0.0.0/0 there, which a check of the prefix as written (96) let through.
    const wide = firstTooWide([parseCidr(entry)], 'trusts');
    if (wide) {
      throw new Error(`"${entry}" ${wide.reason}: any client there could choose its address`);
    }
  }
  return entries;
}

/** Variables of the tray API's defences against abuse by source address (docs/tray-api.md). */
export const trayAbuseShape = {
  TRUST_PROXY: parsedWith(parseTrayTrustProxy).default([]),
  /** Failed authentications (bad token, unknown ticket, wrong admin token) per address per window. */
  AUTH_FAILURE_LIMIT: positiveInt(20, 1_000_000),
  /** The window of AUTH_FAILURE_LIMIT, and how long an address over it is refused (429). */
  AUTH_FAILURE_WINDOW_MS: positiveInt(60_000, 86_400_000).refine((ms) => ms % 1000 === 0, {
    error: 'expected a whole number of seconds in milliseconds (1000, 60000, ...)',
  }),
  /** Addresses/CIDRs whose failed authentications are never counted nor refused (app back ends). */
  AUTH_FAILURE_EXEMPT: parsedWith((value) => {
    const ranges = parseCidrList(value);
    const wide = firstTooWide(ranges, 'exempts');
    if (wide) throw new Error(`"${showCidr(wide.cidr)}" ${wide.reason}; list the app back ends only`);
    return ranges;
  }).default([]),
};

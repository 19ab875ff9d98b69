import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { positiveInt } from './env-types.ts';

/**
 * TRUST_PROXY of the tray service: `off`, `loopback`, or proxy addresses/CIDRs (as Express's
 * `trust proxy` reads them). X-Forwarded-For then counts only when the connection comes from one
 * of them. A hop count, `true` or a /0 would let any client pick its own address.
 */
export function parseTrayTrustProxy(text: string): string[] {
  const value = text.trim().toLowerCase();
  if (value === '' || value === 'off' || value === 'false') return [];
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    if (entry === 'loopback') continue;
    if (/^\d+$/.test(entry) || entry === 'true' || entry === 'all' || entry === '*') {
      throw new Error(
        `"${entry}" would trust X-Forwarded-For from any client; give the proxies' addresses or CIDRs (e.g. 10.0.0.0/8)`,
      );
    }
    const valid = entry.includes('/') ? ipaddr.isValidCIDR(entry) : ipaddr.isValid(entry);
    if (!valid) throw new Error(`"${entry}" is not an IP address or CIDR (e.g. 10.0.0.0/8 or loopback)`);
    if (entry.includes('/') && ipaddr.parseCIDR(entry)[1] === 0) {
      throw new Error(`"${entry}" trusts every address and would let any client choose its address`);
    }
  }
  return entries;
}

/** Variables of the tray API's defences against abuse by source address (docs/tray-api.md). */
export const trayAbuseShape = {
  TRUST_PROXY: z
    .string()
    .transform((value, ctx) => {
      try {
        return parseTrayTrustProxy(value);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    })
    .default([]),
  /** Failed authentications (bad token, unknown ticket, wrong admin token) per address per window. */
  AUTH_FAILURE_LIMIT: positiveInt(20, 1_000_000),
  /** The window of AUTH_FAILURE_LIMIT, and how long an address over it is refused (429). */
  AUTH_FAILURE_WINDOW_MS: positiveInt(60_000, 86_400_000).refine((ms) => ms % 1000 === 0, {
    error: 'expected a whole number of seconds in milliseconds (1000, 60000, ...)',
  }),
};

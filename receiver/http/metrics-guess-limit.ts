import type { IncomingMessage } from 'node:http';
import {
  createMemoryFailedAuthLimit,
  type MemoryFailedAuthLimit,
} from '../../shared/http/memory-failed-auth-limit.ts';
import { clientAddress } from '../address/client-address.ts';
import type { TrustProxy } from '../address/parse-trust-proxy.ts';

/** Wrong METRICS_TOKENs an address may send per window; the next one refuses it (429) for a window. */
export const METRICS_GUESS_LIMIT = 20;
export const METRICS_GUESS_WINDOW_MS = 60_000;
/** Addresses remembered at once: a few hundred kilobytes at most. */
export const METRICS_GUESS_ADDRESSES = 10_000;

/**
 * The limit on guessing the receiver's METRICS_TOKEN, the tray's AUTH_FAILURE_LIMIT defaults. In
 * this process's memory, apart from everything a webhook delivery uses: the receiver's Redis is its
 * queue's, and a count there would put a scraper's guesses on the path of the events.
 */
export function createMetricsGuessLimit(): MemoryFailedAuthLimit {
  return createMemoryFailedAuthLimit({
    points: METRICS_GUESS_LIMIT,
    windowMs: METRICS_GUESS_WINDOW_MS,
    maxAddresses: METRICS_GUESS_ADDRESSES,
  });
}

/**
 * Whose guess a /metrics request is: the client by the receiver's own TRUST_PROXY, as the allowlist
 * reads it. A malformed X-Forwarded-For from a trusted proxy counts apart (not against the proxy,
 * which every honest scrape behind it comes through).
 */
export function metricsCallerAddress(trustProxy: TrustProxy): (req: IncomingMessage) => string {
  return (req) => {
    const client = clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], trustProxy);
    return client.ok ? client.address.toString() : 'unknown';
  };
}

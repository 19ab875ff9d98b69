import { hash } from 'node:crypto';
import { verifiedUntil, type TokenVerifier, type VerifiedToken } from './create-token-verifier.ts';
import { refusedForGood } from './refused-for-good.ts';

export interface VerifiedTokenCacheOptions {
  /** Most verifications kept, and most refusals apart from them; the oldest is forgotten first. */
  maxEntries?: number;
  /**
   * Longest a verification is reused, however long the token is valid: a key withdrawn from a
   * JWKS (JWT_JWKS_URL) stops being honoured for cached tokens at most this much after the key set
   * is fetched again without it (JWKS_CACHE_MAX_AGE_MS). A refusal is kept as long.
   */
  maxAgeMs?: number;
  /** Epoch ms; tests pin it. */
  now?: () => number;
}

const DEFAULT_MAX_ENTRIES = 10_000;
const DEFAULT_MAX_AGE_MS = 60_000;

/**
 * Reuses a successful token verification until the token's `exp`. A client sends the same token
 * with every call, and checking its signature is the costliest step of a cheap request (jose's
 * Web Crypto check takes a thread-pool round trip: about 0.3 ms for HS256, more for RSA); a hash
 * of the token and a map look-up take microseconds. The result is the very one the verifier gave,
 * so the caller, `exp` and every other claim are as verified.
 *
 * - A refusal is kept only when the token would be refused whenever it is sent (refused-for-good.ts:
 *   signed, but expired or of another audience): an app stuck sending an expired token, on every
 *   poll of every user after its token service failed, cost a signature check per call, and such
 *   a token is no guess that the failed-authentication limit counts. A forged token is verified,
 *   and counted against its address (is-token-guess.ts), every time; one not valid yet is
 *   verified every time (it may be valid soon), and not counted (its signature verified). Kept
 *   apart from the successes, so refusals never push a verification out.
 * - An entry ends at `exp` (as jose counts it: valid while now < exp), or when the token becomes
 *   older than a maximum token age if that comes first, and no later than `maxAgeMs` after the
 *   verification.
 * - Keys are the SHA-256 of the token, so no bearer token is held in memory.
 * - Bans and the rate limit are checked on every request after this, cached or not.
 */
export function cacheVerifiedTokens(
  verify: TokenVerifier,
  options: VerifiedTokenCacheOptions = {},
): TokenVerifier {
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const maxAgeMs = options.maxAgeMs ?? DEFAULT_MAX_AGE_MS;
  const now = options.now ?? Date.now;
  const entries = new Map<string, { verified: VerifiedToken; until: number }>();
  const refusals = new Map<string, { refusal: unknown; until: number }>();
  /** Map keeps insertion order: the first key is the oldest, dropped when full. */
  const keep = <T>(map: Map<string, T>, key: string, entry: T) => {
    if (map.size >= maxEntries) map.delete(map.keys().next().value as string);
    map.set(key, entry);
  };
  /** The entry of `key` while it lasts; an expired one is forgotten. */
  const fresh = <T extends { until: number }>(map: Map<string, T>, key: string) => {
    const entry = map.get(key);
    if (entry && now() < entry.until) return entry;
    if (entry) map.delete(key);
    return undefined;
  };

  return async (token) => {
    const key = hash('sha256', token, 'base64url');
    const hit = fresh(entries, key);
    if (hit) return hit.verified;
    const refused = fresh(refusals, key);
    if (refused) throw refused.refusal;
    let verified: VerifiedToken;
    try {
      verified = await verify(token);
    } catch (error) {
      if (refusedForGood(error)) keep(refusals, key, { refusal: error, until: now() + maxAgeMs });
      throw error;
    }
    const acceptedUntil = verifiedUntil(verified);
    const at = now();
    if (acceptedUntil !== undefined && acceptedUntil > at)
      keep(entries, key, { verified, until: Math.min(acceptedUntil, at + maxAgeMs) });
    return verified;
  };
}

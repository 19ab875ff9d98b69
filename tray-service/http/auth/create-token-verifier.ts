import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  errors,
  jwksCache,
  jwtVerify,
  type JWTPayload,
  type ExportedJWKSCache,
  type JWKSCacheInput,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
  type RemoteJWKSetOptions,
} from 'jose';
import type { KeyObject } from 'node:crypto';
import type { JwtConfig } from '../../../shared/config/tray-api-config.ts';
import type { Logger } from '../../../shared/logging/create-logger.ts';
import { redactUrlCredentials } from '../../../shared/logging/redact-url-credentials.ts';
import { AppError } from '../../../shared/errors/app-error.ts';
import { isUsableUserId } from '../../domain/user-id.ts';

export interface VerifiedToken {
  /** The caller's user id: the only source of "who is asking" (docs/contract.md#api-served). */
  userId: string;
  claims: JWTPayload;
  /**
   * With a maximum token age: when the token becomes too old (`iat` plus the maximum plus the
   * last second the verifier still counts, epoch ms),
   * which may be long before its `exp`.
   */
  ageEndsAt?: number;
  /** JWT_CLOCK_TOLERANCE in ms, when set: the verifier accepts the token that much longer. */
  toleranceMs?: number;
}

/**
 * Until when (epoch ms) a verified token stays accepted: its `exp`, or the end of its maximum age
 * when that comes first, plus the clock tolerance, as the verifier counts. A cached verification,
 * a live stream and an admin session end then: one ending earlier would open to a token the
 * verifier takes and end at once (a stream, again and again while its client keeps the token).
 */
export function verifiedUntil(verified: VerifiedToken): number | undefined {
  const { exp } = verified.claims;
  // jose compares whole seconds (`now >= exp`, `now` floored): a fractional exp holds through its second.
  const ends = [typeof exp === 'number' ? Math.ceil(exp) * 1000 : undefined, verified.ageEndsAt].filter(
    (at): at is number => at !== undefined && Number.isFinite(at),
  );
  return ends.length === 0 ? undefined : Math.min(...ends) + (verified.toleranceMs ?? 0);
}

export type TokenVerifier = (token: string) => Promise<VerifiedToken>;

/**
 * The user id a token names: `sub`, else a `userId` claim (string, or a whole number some issuers
 * use); an id no user can have (isUsableUserId) is skipped.
 */
export function userIdFromClaims(claims: JWTPayload): string | undefined {
  if (typeof claims.sub === 'string' && isUsableUserId(claims.sub)) return claims.sub;
  const userId = claims.userId;
  if (typeof userId === 'string' && isUsableUserId(userId)) return userId;
  if (typeof userId === 'number' && Number.isSafeInteger(userId)) return String(userId);
  return undefined;
}

const invalidToken = { 'WWW-Authenticate': 'Bearer error="invalid_token"' };

/**
 * The cause of a refusal of a token whose signature verified (an audience refused here, no user
 * named): issued with the real key, so no guess at one (is-token-guess.ts).
 */
export class SignedTokenRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SignedTokenRefused';
  }
}

/** A 401 for a token whose signature verified but which is not accepted. */
const signedButRefused = (message: string) =>
  new AppError('UNAUTHORIZED', message, { cause: new SignedTokenRefused(message), headers: invalidToken });

/** Client-facing reason for a rejected token; never echoes key material or library internals. */
function reason(error: unknown): string {
  // jose says JWTExpired of `iat` when the token is older than maxTokenAge, though its exp is not past.
  if (error instanceof errors.JWTExpired && error.claim === 'iat')
    return 'token is older than the maximum token age';
  if (error instanceof errors.JWTExpired) return 'token has expired';
  if (error instanceof errors.JWTClaimValidationFailed) return `token claim "${error.claim}" is invalid`;
  if (error instanceof errors.JOSEAlgNotAllowed) return 'token algorithm is not accepted';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'token signature is invalid';
  if (error instanceof errors.JWKSNoMatchingKey) return 'token key is unknown';
  return 'token is invalid';
}

/**
 * How long a fetched JWKS is used before it is fetched again (jose's default, named): shorter
 * drops a withdrawn key sooner.
 */
export const JWKS_CACHE_MAX_AGE_MS = 600_000;

/**
 * How long after its fetch a JWKS still verifies when every refresh since has failed: a key-server
 * outage of up to a day leaves the API serving, while a key withdrawn meanwhile keeps verifying
 * until the server answers again (at most this long).
 */
export const STALE_KEYS_MAX_MS = 86_400_000;

/**
 * After a fetch, how long a token of an unknown `kid` does not fetch the key set again: at most
 * one fetch per this interval however many such tokens come. Within it such a token is refused
 * (401) without asking, so a key the provider has just added is refused for this long at most
 * after a fetch made before it was added. jose's default, 30 s, was that long; a made-up `kid`
 * can start one at any time.
 */
export const JWKS_COOLDOWN_MS = 5_000;

/** How long a failed key fetch is remembered before the key server is asked again. */
export const DEFAULT_KEY_RETRY_MS = 5_000;

export interface TokenVerifierOptions {
  /** JWT_JWKS_URL only: ms after a failed key fetch during which no new fetch is tried. */
  keyRetryMs?: number;
  /** JWT_JWKS_URL only: ms a fetched key set is used before it is fetched again (JWKS_CACHE_MAX_AGE_MS). */
  keyMaxAgeMs?: number;
  /** JWT_JWKS_URL only: ms after its fetch a key set still verifies while refreshes fail (STALE_KEYS_MAX_MS). */
  staleKeysMaxMs?: number;
  /** JWT_JWKS_URL only: told of each failed fetch (at most one per keyRetryMs), stale keys serving or not. */
  logger?: Pick<Logger, 'warn'>;
}

/** 503, with Retry-After: when the key server is asked again (`afterMs`), in whole seconds. */
const keysUnavailable = (cause: unknown, afterMs: number) =>
  new AppError('UNAVAILABLE', 'token keys are unavailable', {
    cause,
    headers: { 'Retry-After': String(Math.max(1, Math.ceil(afterMs / 1000))) },
  });

/** Whether jose has written a fetched key set into the cache object yet. */
const wasFetched = (cache: JWKSCacheInput): cache is ExportedJWKSCache => 'uat' in cache && 'jwks' in cache;

/**
 * The JWKS key lookup, telling a token the keys do not cover from keys that could not be had.
 * jose throws JWKSTimeout, a plain `TypeError: fetch failed` (refused, DNS), a bare JOSEError (not
 * 200, not JSON) or JWKSInvalid when the fetch fails; taken as a bad token, each would answer a
 * valid caller 401 and count against its address until it is refused with 429 for a whole window,
 * outage over or not. Only "no key matches" (or several) says something about the token.
 *
 * A failure is remembered for `retryMs`: until then a lookup that needs a fetch fails at once
 * instead of asking the key server again, so an outage costs it one request per interval per
 * instance, not one per API call. Keys already fetched keep serving meanwhile: within their max
 * age jose needs no fetch, and past it (jose then fails the lookup with the refresh) the last set
 * fetched verifies for up to `staleMaxMs` after its fetch.
 */
function remoteKeys(
  url: URL,
  options: { retryMs: number; maxAgeMs: number; staleMaxMs: number; logger?: Pick<Logger, 'warn'> },
): JWTVerifyGetKey {
  const { retryMs, maxAgeMs, staleMaxMs, logger } = options;
  let failedAt = Number.NEGATIVE_INFINITY;
  let lastFailure: unknown;
  let warnedAt = Number.NEGATIVE_INFINITY;
  /** How long until the key server is asked again (<= 0: now). */
  const untilRetry = () => retryMs - (Date.now() - failedAt);
  // jose writes each fetched set and its time here; `stale` is the lookup over the set kept.
  const fetched: JWKSCacheInput = {};
  let stale: { uat: number; keys: JWTVerifyGetKey } | undefined;
  const staleKeys = (): JWTVerifyGetKey | undefined => {
    if (!wasFetched(fetched) || Date.now() - fetched.uat > staleMaxMs) return undefined;
    const { uat, jwks } = fetched;
    if (stale?.uat !== uat) stale = { uat, keys: createLocalJWKSet(jwks) };
    return stale.keys;
  };
  const fetchUnlessFailing: NonNullable<RemoteJWKSetOptions[typeof customFetch]> = (input, init) => {
    const wait = untilRetry();
    if (wait > 0) return Promise.reject(keysUnavailable(lastFailure, wait));
    return fetch(input, init);
  };
  // The key set is fetched again once it is JWKS_CACHE_MAX_AGE_MS old, or at once for a token of
  // an unknown `kid`: a key withdrawn from the set stops verifying within that time (while the key
  // server answers; see staleMaxMs).
  const keys = createRemoteJWKSet(url, {
    [customFetch]: fetchUnlessFailing,
    [jwksCache]: fetched,
    cacheMaxAge: maxAgeMs,
    cooldownDuration: JWKS_COOLDOWN_MS,
  });
  return async (protectedHeader, token) => {
    try {
      return await keys(protectedHeader, token);
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) {
        throw error;
      }
      // The hook's refusal during the interval: the failure it stands for is already remembered.
      const kept = staleKeys();
      // Every lookup waiting on one failed fetch gets the same error: it is remembered, and
      // logged, once (at most once per interval whatever fails).
      if (!(error instanceof AppError) && error !== lastFailure) {
        failedAt = Date.now();
        lastFailure = error;
        if (failedAt - warnedAt >= retryMs) {
          warnedAt = failedAt;
          logger?.warn(
            { err: error, url: redactUrlCredentials(url.href), staleKeys: kept !== undefined },
            'token key fetch failed',
          );
        }
      }
      const unavailable = error instanceof AppError ? error : keysUnavailable(error, untilRetry());
      if (!kept) throw unavailable;
      try {
        return await kept(protectedHeader, token);
      } catch (staleError) {
        // A key the kept set lacks may be one the server added since: unknown is not known yet.
        if (staleError instanceof errors.JWKSNoMatchingKey) throw unavailable;
        throw staleError;
      }
    }
  };
}

/**
 * A key set that holds several keys fit for a token that names no `kid` (a rotation: the old key
 * and the new one) makes jose refuse to choose, and hand the caller the candidates to try: the
 * token verifies with the one that signed it. Any other error is the verdict as it was.
 */
async function eachMatchingKey(
  token: string,
  error: unknown,
  checks: JWTVerifyOptions,
): Promise<Awaited<ReturnType<typeof jwtVerify>>> {
  if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw error;
  for await (const candidate of error) {
    try {
      return await jwtVerify(token, candidate, checks);
    } catch (refused) {
      // Its claims are checked only once this key verified the signature: that is the verdict.
      if (refused instanceof errors.JWTClaimValidationFailed || refused instanceof errors.JWTExpired)
        throw refused;
      // Not this key (another signed it, or it is one jose will not use: an RSA key under 2,048 bits).
    }
  }
  throw new errors.JWSSignatureVerificationFailed();
}

/**
 * Builds the bearer-token check shared by the tray API and the admin API. The algorithm
 * list is explicit (so `alg: none` and HS/RS confusion are refused), `exp` is required, iss/aud
 * and the maximum age since `iat` are checked when configured, and a token of `refusedAudience`
 * is refused.
 */
export function createTokenVerifier(config: JwtConfig, options: TokenVerifierOptions = {}): TokenVerifier {
  const { source } = config;
  const key: Uint8Array | KeyObject | JWTVerifyGetKey =
    source.kind === 'secret'
      ? source.secret
      : source.kind === 'publicKey'
        ? source.key
        : remoteKeys(source.url, {
            retryMs: options.keyRetryMs ?? DEFAULT_KEY_RETRY_MS,
            maxAgeMs: options.keyMaxAgeMs ?? JWKS_CACHE_MAX_AGE_MS,
            staleMaxMs: options.staleKeysMaxMs ?? STALE_KEYS_MAX_MS,
            ...(options.logger ? { logger: options.logger } : {}),
          });
  const checks = {
    algorithms: source.algorithms,
    requiredClaims: ['exp'],
    ...(config.issuer === undefined ? {} : { issuer: config.issuer }),
    ...(config.audience === undefined ? {} : { audience: config.audience }),
    // jose then requires `iat` too, and refuses one in the future.
    ...(config.maxTokenAge === undefined ? {} : { maxTokenAge: config.maxTokenAge }),
    // For `exp`, `nbf`, `iat` in the future and the age alike (jose's); verifiedUntil counts it.
    ...(config.clockTolerance === undefined ? {} : { clockTolerance: config.clockTolerance }),
  };
  return async (token) => {
    let claims: JWTPayload;
    try {
      // jwtVerify is overloaded on the key kind; the union is resolved here for the type checker.
      ({ payload: claims } =
        typeof key === 'function'
          ? await jwtVerify(token, key, checks).catch((error: unknown) =>
              eachMatchingKey(token, error, checks),
            )
          : await jwtVerify(token, key, checks));
    } catch (error) {
      // remoteKeys' verdict: the keys could not be had, which says nothing about the token.
      if (error instanceof AppError) throw error;
      throw new AppError('UNAUTHORIZED', reason(error), { cause: error, headers: invalidToken });
    }
    // jose checks `aud` only against a configured audience: of any other shape (a number, null),
    // the check below threw, and a signed token was answered 500.
    const audiences = audiencesOf(claims.aud as unknown);
    if (audiences === undefined) throw signedButRefused('token claim "aud" is invalid');
    if (config.refusedAudience !== undefined && audiences.includes(config.refusedAudience)) {
      // Worded as jose words an audience it refuses.
      throw signedButRefused('token claim "aud" is invalid');
    }
    const userId = userIdFromClaims(claims);
    if (userId === undefined) {
      throw signedButRefused('token names no user (sub or userId claim)');
    }
    const { maxTokenAge, clockTolerance } = config;
    return {
      userId,
      claims,
      // jose required an `iat` when there is a maximum age. It counts whole seconds and refuses
      // only once the age exceeds the maximum, so it takes the token through the last second:
      // ending a second earlier would open a stream in that second and end it at once.
      ...(maxTokenAge !== undefined && typeof claims.iat === 'number'
        ? { ageEndsAt: (Math.floor(claims.iat) + maxTokenAge + 1) * 1000 }
        : {}),
      ...(clockTolerance === undefined ? {} : { toleranceMs: clockTolerance * 1000 }),
    };
  };
}

/** A token's audiences: none, one string or a list of strings; undefined for any other shape. */
function audiencesOf(aud: unknown): readonly string[] | undefined {
  if (aud === undefined) return [];
  if (typeof aud === 'string') return [aud];
  return Array.isArray(aud) && aud.every((one) => typeof one === 'string') ? (aud as string[]) : undefined;
}

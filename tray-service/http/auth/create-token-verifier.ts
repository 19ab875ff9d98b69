import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { KeyObject } from 'node:crypto';
import type { JwtConfig } from '../../../shared/config/tray-api-config.ts';
import { AppError } from '../../../shared/errors/app-error.ts';

export interface VerifiedToken {
  /** The caller's user id: the only source of "who is asking" (docs/contract.md#api-served). */
  userId: string;
  claims: JWTPayload;
}

export type TokenVerifier = (token: string) => Promise<VerifiedToken>;

/**
 * Control characters never occur in a platform user id, and PostgreSQL (behind FerretDB) cannot
 * hold U+0000 in a document at all: such an id names nobody.
 */
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;
const usable = (id: string) => id !== '' && !CONTROL_CHARACTER.test(id);

/** The user id a token names: `sub`, else a `userId` claim (string, or a whole number some issuers use). */
export function userIdFromClaims(claims: JWTPayload): string | undefined {
  if (typeof claims.sub === 'string' && usable(claims.sub)) return claims.sub;
  const userId = claims.userId;
  if (typeof userId === 'string' && usable(userId)) return userId;
  if (typeof userId === 'number' && Number.isSafeInteger(userId)) return String(userId);
  return undefined;
}

const invalidToken = { 'WWW-Authenticate': 'Bearer error="invalid_token"' };

/** Client-facing reason for a rejected token; never echoes key material or library internals. */
function reason(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'token has expired';
  if (error instanceof errors.JWTClaimValidationFailed) return `token claim "${error.claim}" is invalid`;
  if (error instanceof errors.JOSEAlgNotAllowed) return 'token algorithm is not accepted';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'token signature is invalid';
  if (error instanceof errors.JWKSNoMatchingKey) return 'token key is unknown';
  return 'token is invalid';
}

/**
 * Builds the bearer-token check shared by the tray API and the admin API. The algorithm
 * list is explicit (so `alg: none` and HS/RS confusion are refused), `exp` is required, and
 * iss/aud are checked when configured.
 */
export function createTokenVerifier(config: JwtConfig): TokenVerifier {
  const { source } = config;
  const key: Uint8Array | KeyObject | JWTVerifyGetKey =
    source.kind === 'secret'
      ? source.secret
      : source.kind === 'publicKey'
        ? source.key
        : createRemoteJWKSet(source.url);
  const options = {
    algorithms: source.algorithms,
    requiredClaims: ['exp'],
    ...(config.issuer === undefined ? {} : { issuer: config.issuer }),
    ...(config.audience === undefined ? {} : { audience: config.audience }),
  };
  return async (token) => {
    let claims: JWTPayload;
    try {
      // jwtVerify is overloaded on the key kind; the union is resolved here for the type checker.
      ({ payload: claims } =
        typeof key === 'function'
          ? await jwtVerify(token, key, options)
          : await jwtVerify(token, key, options));
    } catch (error) {
      if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) {
        throw new AppError('UNAVAILABLE', 'token keys are unavailable', { cause: error });
      }
      throw new AppError('UNAUTHORIZED', reason(error), { cause: error, headers: invalidToken });
    }
    const userId = userIdFromClaims(claims);
    if (userId === undefined) {
      throw new AppError('UNAUTHORIZED', 'token names no user (sub or userId claim)', {
        headers: invalidToken,
      });
    }
    return { userId, claims };
  };
}

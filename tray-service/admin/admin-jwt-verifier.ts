import { createHash, createHmac } from 'node:crypto';
import type { JwtConfig } from '../../shared/config/tray-api-config.ts';
import {
  createTokenVerifier,
  type TokenVerifier,
  type TokenVerifierOptions,
} from '../http/auth/create-token-verifier.ts';

/**
 * The admin JWTs' verifier, with a fingerprint of what it checks: the key (ADMIN_JWT_SECRET,
 * ADMIN_JWT_JWKS_URL, or the tray API's), its algorithms, the audience, the issuer and the maximum
 * age. A session opened with an admin JWT holds the fingerprint and ends when it changes, as one
 * opened with ADMIN_TOKEN ends when that token changes: rotating the key after a leak must also
 * sign out whoever signed in with a JWT of the old key.
 */
export type AdminJwtVerifier = TokenVerifier & { readonly keyFingerprint: string };

/**
 * Never the key itself: a secret is taken by an HMAC keyed with it (as ADMIN_TOKEN's fingerprint
 * is), a public key by its SPKI bytes, a JWKS by its URL (the provider's own key rotation behind
 * one URL ends no session; the JWT's `exp` does).
 */
export function adminJwtKeyFingerprint(config: JwtConfig): string {
  const { source } = config;
  const key =
    source.kind === 'secret'
      ? createHmac('sha256', source.secret).update('admin-jwt-key').digest('base64url')
      : source.kind === 'publicKey'
        ? createHash('sha256')
            .update(source.key.export({ type: 'spki', format: 'der' }))
            .digest('base64url')
        : source.url.href;
  const checked = [
    source.kind,
    key,
    source.algorithms,
    config.audience ?? null,
    config.issuer ?? null,
    config.maxTokenAge ?? null,
  ];
  return createHash('sha256').update(JSON.stringify(checked)).digest('base64url');
}

export function createAdminJwtVerifier(
  config: JwtConfig,
  options: TokenVerifierOptions = {},
): AdminJwtVerifier {
  return Object.assign(createTokenVerifier(config, options), {
    keyFingerprint: adminJwtKeyFingerprint(config),
  });
}

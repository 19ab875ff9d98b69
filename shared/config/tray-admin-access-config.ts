import { z } from 'zod';
import { ConfigError } from '../errors/config-error.ts';
import { durationSeconds, onOff, parsedWith, port } from './env-types.ts';
import { listenHost, LOOPBACK } from './listen-config.ts';
import { isLoopbackHost } from './loopback-host.ts';
import { secureUrl } from './secure-url.ts';
import type { JwtConfig, JwtKeySource } from './tray-api-config.ts';
import { parseTrayTrustProxy } from './tray-abuse-config.ts';
import { bearerSecret, checkMetricsPort } from './ops-config.ts';

/**
 * Express's `trust proxy` value for the admin listener: `off`, or addresses and CIDRs of the
 * proxies (and `loopback`), read by the same rule as TRUST_PROXY: a hop count would trust whatever
 * a direct client writes in X-Forwarded-For. With it the dashboard's cookie is `Secure` when the
 * proxy says the browser came over https.
 */
const trustProxy = parsedWith((value): false | string[] => {
  const entries = parseTrayTrustProxy(value);
  return entries.length === 0 ? false : entries;
}).default(false);

/** Who is an admin, and where the admin API listens (docs/operations.md#admin-authentication). */
export const trayAdminAccessShape = {
  /**
   * The operators' bearer secret for /admin/* (compared in constant time). At least 32 characters
   * so it cannot be guessed, printable ASCII without spaces so a bearer header can carry it; unset,
   * with no admin JWTs configured: the admin API is off.
   */
  ADMIN_TOKEN: bearerSecret().optional(),
  /**
   * Admin JWTs: signed with their own key (below) or else the tray API's (JWT_SECRET,
   * JWT_PUBLIC_KEY or JWT_JWKS_URL), carrying this audience and issuer. Both or neither; a user token's claims never make an admin.
   */
  ADMIN_JWT_AUDIENCE: z.string().min(1).optional(),
  ADMIN_JWT_ISSUER: z.string().min(1).optional(),
  /**
   * A key of the admin JWTs' own, so whoever can mint user tokens cannot mint an admin one: an
   * HS256 secret, or the JWKS of the operators' identity provider. At most one; unset: the tray
   * API's key, as before.
   */
  ADMIN_JWT_SECRET: z.string().min(32, { error: 'expected a secret of at least 32 characters' }).optional(),
  ADMIN_JWT_JWKS_URL: secureUrl().optional(),
  /**
   * The longest an admin JWT is accepted after its `iat` (which it must then carry); unset: no
   * maximum, as before. The admin JWTs' own, since their issuer is the operators' and not the
   * platform's: JWT_MAX_TOKEN_AGE does not apply to them.
   */
  ADMIN_JWT_MAX_TOKEN_AGE: durationSeconds().optional(),
  /** The admin API's own listener, on loopback unless ADMIN_HOST says otherwise (HOST does not apply). */
  ADMIN_PORT: port(8082),
  ADMIN_HOST: listenHost.default(LOOPBACK),
  ADMIN_TRUST_PROXY: trustProxy,
  /**
   * `on`: a TLS-terminating proxy is in front of the admin listener. Required for a non-loopback
   * ADMIN_HOST (the listener itself speaks plain http); the session cookie is then always `Secure`.
   */
  ADMIN_BEHIND_TLS: onOff('off'),
  /** `on` lets the queue dashboard retry, clean, promote and pause; it never adds or edits jobs. */
  QUEUE_DASHBOARD_WRITE: onOff('off'),
};

export interface AdminJwtConfig {
  audience: string;
  issuer: string;
  /** Their own key (ADMIN_JWT_SECRET, ADMIN_JWT_JWKS_URL); absent: the tray API's. */
  source?: JwtKeySource;
  /** ADMIN_JWT_MAX_TOKEN_AGE, in seconds. */
  maxTokenAge?: number;
}

/**
 * What admin JWTs are verified with: their own key when configured, else the tray API's; with the
 * tray API's clock tolerance (one host's clock against the issuers').
 */
export function adminJwtKeys(admin: AdminJwtConfig, user: JwtConfig): JwtConfig {
  return {
    source: admin.source ?? user.source,
    audience: admin.audience,
    issuer: admin.issuer,
    ...(admin.maxTokenAge === undefined ? {} : { maxTokenAge: admin.maxTokenAge }),
    ...(user.clockTolerance === undefined ? {} : { clockTolerance: user.clockTolerance }),
  };
}

/**
 * The admin JWTs' own key source, or undefined; both set is an error. The user tokens' secret
 * reused as it is refused with the other reused secrets (secrets-apart.ts).
 */
function ownAdminKey(config: {
  ADMIN_JWT_SECRET?: string | undefined;
  ADMIN_JWT_JWKS_URL?: string | undefined;
}): JwtKeySource | undefined {
  const { ADMIN_JWT_SECRET: secret, ADMIN_JWT_JWKS_URL: jwks } = config;
  if (secret !== undefined && jwks !== undefined) {
    throw new ConfigError([
      { variable: 'ADMIN_JWT_SECRET, ADMIN_JWT_JWKS_URL', message: 'set at most one admin JWT key' },
    ]);
  }
  if (secret !== undefined) {
    return { kind: 'secret', secret: new TextEncoder().encode(secret), algorithms: ['HS256'] };
  }
  return jwks === undefined
    ? undefined
    : { kind: 'jwks', url: new URL(jwks), algorithms: ['RS256', 'ES256'] };
}

/**
 * What user tokens are verified with: `keys`, refusing the admin JWTs' audience. Without it, with
 * JWT_AUDIENCE unset (user tokens' audience not checked), an admin JWT signed with the user tokens'
 * key would be taken as a user token naming its `sub`.
 */
export function userJwtKeys(keys: JwtConfig, admin: AdminJwtConfig | undefined): JwtConfig {
  return admin === undefined ? keys : { ...keys, refusedAudience: admin.audience };
}

/** The admin JWT settings, or undefined when admin JWTs are off; half a pair is an error. */
export function resolveAdminJwt(config: {
  ADMIN_JWT_AUDIENCE?: string | undefined;
  ADMIN_JWT_ISSUER?: string | undefined;
  ADMIN_JWT_SECRET?: string | undefined;
  ADMIN_JWT_JWKS_URL?: string | undefined;
  ADMIN_JWT_MAX_TOKEN_AGE?: number | undefined;
  JWT_AUDIENCE?: string | undefined;
}): AdminJwtConfig | undefined {
  const { ADMIN_JWT_AUDIENCE: audience, ADMIN_JWT_ISSUER: issuer } = config;
  const source = ownAdminKey(config);
  if (audience === undefined && issuer === undefined && source === undefined) {
    if (config.ADMIN_JWT_MAX_TOKEN_AGE === undefined) return undefined;
    throw new ConfigError([
      {
        variable: 'ADMIN_JWT_MAX_TOKEN_AGE',
        message:
          'bounds admin JWTs, which are off: set ADMIN_JWT_AUDIENCE and ADMIN_JWT_ISSUER too, or unset it',
      },
    ]);
  }
  if (audience === undefined || issuer === undefined) {
    throw new ConfigError([
      {
        variable: audience === undefined ? 'ADMIN_JWT_AUDIENCE' : 'ADMIN_JWT_ISSUER',
        message: 'admin JWTs need both ADMIN_JWT_AUDIENCE and ADMIN_JWT_ISSUER',
      },
    ]);
  }
  if (audience === config.JWT_AUDIENCE) {
    throw new ConfigError([
      {
        variable: 'ADMIN_JWT_AUDIENCE',
        message: 'must differ from JWT_AUDIENCE, or every user token would be an admin token',
      },
    ]);
  }
  const maxTokenAge = config.ADMIN_JWT_MAX_TOKEN_AGE;
  return {
    audience,
    issuer,
    ...(source === undefined ? {} : { source }),
    ...(maxTokenAge === undefined ? {} : { maxTokenAge }),
  };
}

/**
 * The admin listener speaks plain http: off loopback, the sign-in form's credential and the session
 * cookie would cross the network in clear unless a TLS proxy is in front, which the operator says
 * with ADMIN_BEHIND_TLS=on. Behind that proxy, every client's address is the proxy's unless it is
 * trusted (ADMIN_TRUST_PROXY): one client's failed sign-ins would then refuse every operator.
 */
export function checkAdminListener(config: {
  ADMIN_HOST: string;
  ADMIN_BEHIND_TLS: 'on' | 'off';
  ADMIN_TRUST_PROXY: false | readonly string[];
}): void {
  if (config.ADMIN_BEHIND_TLS === 'on' && config.ADMIN_TRUST_PROXY === false)
    throw new ConfigError([
      {
        variable: 'ADMIN_TRUST_PROXY',
        message:
          'not set with ADMIN_BEHIND_TLS=on: name the TLS proxy (its addresses or CIDRs, or loopback), or every client counts as the proxy and one client’s failed sign-ins refuse every operator',
      },
    ]);
  if (config.ADMIN_BEHIND_TLS === 'on' || isLoopbackHost(config.ADMIN_HOST)) return;
  throw new ConfigError([
    {
      variable: 'ADMIN_HOST',
      message: `${config.ADMIN_HOST} is not loopback and the admin listener speaks plain http (credentials and cookies in clear); put a TLS proxy in front and set ADMIN_BEHIND_TLS=on`,
    },
  ]);
}

/**
 * The admin listener is a second one: it cannot share the tray API's port, and METRICS_PORT
 * neither. A worker-only process (TRAY_ROLE=worker) has no admin listener, nor has an API process
 * without admin credentials (`adminServed` false: no ADMIN_TOKEN, no admin JWTs), but each serves
 * TRAY_PORT, so METRICS_PORT must still differ from that; ADMIN_PORT, never opened, is not checked.
 */
export function checkAdminPort(
  config: {
    ADMIN_PORT: number;
    TRAY_PORT: number;
    TRAY_ROLE: string;
    METRICS_PORT?: number | undefined;
  },
  adminServed: boolean,
): void {
  if (config.TRAY_ROLE === 'worker' || !adminServed)
    return checkMetricsPort(config.METRICS_PORT, { TRAY_PORT: config.TRAY_PORT });
  checkMetricsPort(config.METRICS_PORT, { TRAY_PORT: config.TRAY_PORT, ADMIN_PORT: config.ADMIN_PORT });
  if (config.ADMIN_PORT === config.TRAY_PORT) {
    throw new ConfigError([
      {
        variable: 'ADMIN_PORT',
        message: `must differ from TRAY_PORT (${config.TRAY_PORT}): the admin API listens on a port of its own`,
      },
    ]);
  }
}

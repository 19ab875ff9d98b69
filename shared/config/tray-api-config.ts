import { createPublicKey, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { durationSeconds, identifier, onOff, parsedWith, positiveInt, wholeNumber } from './env-types.ts';
import { corsOrigins } from './cors-origins.ts';
import { secureUrl } from './secure-url.ts';
import { ConfigError } from '../errors/config-error.ts';
import { listEntries } from '../text/list-entries.ts';

/** JWS algorithms the tray verifies with a public key (JWT_PUBLIC_KEY, JWT_JWKS_URL). */
export const asymmetricAlgorithms = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
];
/** JWS algorithms the tray verifies with JWT_SECRET. */
export const hmacAlgorithms = ['HS256', 'HS384', 'HS512'];

/** What an algorithm's name looks like (`RS256`, `EdDSA`, a typo of one): safe to repeat in an error. */
const ALGORITHM_LIKE = /^[A-Za-z]{2,5}[0-9]{0,3}$/;

/**
 * A comma-separated list of JWS algorithms; `none` is not a signature algorithm and is never
 * accepted. An empty entry is named by its place, an unknown one by its name when it looks like
 * one, else by its place: a secret pasted here (swapped lines of a template) would be logged.
 */
const algorithmList = parsedWith((value) => {
  const known = [...hmacAlgorithms, ...asymmetricAlgorithms];
  const items = listEntries(value);
  const unknown = items.findIndex((item) => !known.includes(item));
  if (unknown >= 0) {
    const item = items[unknown] ?? '';
    const named = ALGORITHM_LIKE.test(item) ? `"${item}"` : `entry ${unknown + 1}`;
    throw new Error(`${named} is not a JWS algorithm the tray verifies; expected ${known.join(', ')}`);
  }
  if (items.length === 0) throw new Error(`expected a comma-separated list of ${known.join(', ')}`);
  return items;
});

/** Variables of the tray service's tray and block-list HTTP API: auth, rate limits. */
export const trayApiShape = {
  /** HS256 shared secret (docs/contract.md#api-served). Exactly one of the three key sources is set. */
  JWT_SECRET: z.string().min(32, { error: 'expected a secret of at least 32 characters' }).optional(),
  /** PEM public key (SPKI) for RS*, PS*, ES* or EdDSA tokens; `\n` escapes are accepted for one-line env files. */
  JWT_PUBLIC_KEY: z.string().optional(),
  /** JWKS endpoint of the token issuer; keys are fetched and cached by jose. */
  JWT_JWKS_URL: secureUrl().optional(),
  /** Accepted algorithms; default: HS256 for JWT_SECRET, the key's own for JWT_PUBLIC_KEY, RS256,ES256 for JWKS. */
  JWT_ALGORITHMS: algorithmList.optional(),
  JWT_ISSUER: z.string().optional(),
  /** Required with JWT_JWKS_URL (resolveJwtConfig): a provider's key set signs its other applications' tokens too. */
  JWT_AUDIENCE: z.string().optional(),
  /**
   * The longest a user token is accepted after its `iat`, in seconds, which makes `iat` required;
   * unset: no maximum, `exp` alone decides, as before. A token minted with an `exp` years away
   * (leaked, or from a careless issuer) then stops working this long after it was issued.
   */
  JWT_MAX_TOKEN_AGE: durationSeconds().optional(),
  /**
   * Seconds a token's time claims may be off by, for user and admin JWTs alike: an issuer whose
   * clock runs ahead of this host's mints tokens whose `iat` or `nbf` lies in the future here, and
   * each would be refused (401) for that long after it is issued. It accepts a token no later than
   * this after its `exp` (or its maximum age), and what it opens (a stream, a session) ends as late.
   */
  JWT_CLOCK_TOLERANCE: wholeNumber('expected whole seconds from 0 to 300', 0, 300).default(0),
  /** Calls per user per window, shared by every API instance through Redis (docs/contract.md#limits). */
  RATE_LIMIT_CALLS: positiveInt(100, 1_000_000),
  RATE_LIMIT_WINDOW_MS: positiveInt(5_000, 86_400_000).refine((ms) => ms % 1000 === 0, {
    error: 'expected a whole number of seconds in milliseconds (1000, 5000, ...)',
  }),
  /** Prefix of the rate limiter's Redis keys. */
  RATE_LIMIT_PREFIX: identifier('tray-rl'),
  TRAY_PAGE_SIZE: positiveInt(10, 100),
  /** First half of a block-list entry's `netid_uid` (docs/contract.md#block-list-legacy-beta-deprecated). */
  NETWORK_ID: identifier('default'),
  /** The legacy block list (docs/contract.md#block-list-legacy-beta-deprecated); `off` answers 410 Gone after its sunset. */
  BLOCK_API: onOff('on'),
  /**
   * Web origins whose pages may call the tray and block-list API and open the live stream from a
   * browser (CORS): a comma-separated list, or `*` for any; unset: none, as a browser then allows
   * the tray's own origin only. Tokens travel in a header, never a cookie, so `*` lets no page act
   * for a user whose token it does not hold.
   */
  TRAY_CORS_ORIGINS: corsOrigins(),
};

export type JwtKeySource =
  | { kind: 'secret'; secret: Uint8Array; algorithms: string[] }
  | { kind: 'publicKey'; key: KeyObject; algorithms: string[] }
  | { kind: 'jwks'; url: URL; algorithms: string[] };

export interface JwtConfig {
  source: JwtKeySource;
  issuer?: string;
  audience?: string;
  /**
   * A token for this audience is refused even when `audience` is unset: the admin JWTs', which
   * the user tokens' key may sign too, so an operator's token never acts as a user of the tray API.
   */
  refusedAudience?: string;
  /** Seconds after `iat` a token is accepted (JWT_MAX_TOKEN_AGE, ADMIN_JWT_MAX_TOKEN_AGE); `iat` is then required. */
  maxTokenAge?: number;
  /** Seconds the time claims may be off by (JWT_CLOCK_TOLERANCE); 0 when unset. */
  clockTolerance?: number;
}

interface JwtVariables {
  JWT_SECRET?: string | undefined;
  JWT_PUBLIC_KEY?: string | undefined;
  JWT_JWKS_URL?: string | undefined;
  JWT_ALGORITHMS?: string[] | undefined;
  JWT_ISSUER?: string | undefined;
  JWT_AUDIENCE?: string | undefined;
  JWT_MAX_TOKEN_AGE?: number | undefined;
  JWT_CLOCK_TOLERANCE?: number | undefined;
}

function fail(variable: string, message: string): never {
  throw new ConfigError([{ variable, message }]);
}

/** The EC curves a JWS algorithm names (RFC 7518), by Node's name of the curve. */
const EC_ALGORITHMS: Record<string, { name: string; algorithm: string }> = {
  prime256v1: { name: 'P-256', algorithm: 'ES256' },
  secp384r1: { name: 'P-384', algorithm: 'ES384' },
  secp521r1: { name: 'P-521', algorithm: 'ES512' },
};

/**
 * What a public key can verify, as jose checks it: the key's kind for an operator, and its
 * algorithms, the default first. An RSA key verifies PS too; an RSA-PSS key only PS; an EC key the
 * one algorithm of its curve.
 */
function keyAlgorithms(key: KeyObject): { kind: string; algorithms: string[] } {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return { kind: 'an RSA key', algorithms: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'] };
    case 'rsa-pss':
      return { kind: 'an RSA-PSS key', algorithms: ['PS256', 'PS384', 'PS512'] };
    case 'ec': {
      const curve = EC_ALGORITHMS[key.asymmetricKeyDetails?.namedCurve ?? ''];
      if (curve === undefined) {
        return fail(
          'JWT_PUBLIC_KEY',
          `unsupported EC curve ${key.asymmetricKeyDetails?.namedCurve ?? 'unknown'}; use P-256, P-384 or P-521`,
        );
      }
      return { kind: `an EC ${curve.name} key`, algorithms: [curve.algorithm] };
    }
    case 'ed25519':
      return { kind: 'an Ed25519 key', algorithms: ['EdDSA'] };
    default:
      return fail('JWT_PUBLIC_KEY', `unsupported key type ${key.asymmetricKeyType ?? 'unknown'}`);
  }
}

/** `a, b or c`. */
const orList = (items: readonly string[]) =>
  items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items.at(-1) ?? ''}`;

/**
 * Resolves the one JWT key source. Kept out of the schema so the rest of the tray config (and
 * tools that need only part of it) parse without auth settings; main.ts runs it at start-up.
 */
export function resolveJwtConfig(vars: JwtVariables): JwtConfig {
  const set = (['JWT_SECRET', 'JWT_PUBLIC_KEY', 'JWT_JWKS_URL'] as const).filter(
    (name) => vars[name] !== undefined,
  );
  if (set.length !== 1) {
    fail(
      set.length === 0 ? 'JWT_SECRET' : set.join(', '),
      set.length === 0
        ? 'no token key: set exactly one of JWT_SECRET, JWT_PUBLIC_KEY or JWT_JWKS_URL'
        : 'set exactly one of JWT_SECRET, JWT_PUBLIC_KEY or JWT_JWKS_URL, not several',
    );
  }
  const requested = vars.JWT_ALGORITHMS;
  const extra = {
    issuer: vars.JWT_ISSUER,
    audience: vars.JWT_AUDIENCE,
    maxTokenAge: vars.JWT_MAX_TOKEN_AGE,
    clockTolerance: vars.JWT_CLOCK_TOLERANCE,
  };
  const clean = (config: JwtConfig): JwtConfig => ({
    source: config.source,
    ...(extra.issuer === undefined ? {} : { issuer: extra.issuer }),
    ...(extra.audience === undefined ? {} : { audience: extra.audience }),
    ...(extra.maxTokenAge === undefined ? {} : { maxTokenAge: extra.maxTokenAge }),
    ...(extra.clockTolerance ? { clockTolerance: extra.clockTolerance } : {}),
  });
  if (vars.JWT_SECRET !== undefined) {
    const algorithms = requested ?? ['HS256'];
    const wrong = algorithms.find((alg) => !hmacAlgorithms.includes(alg));
    if (wrong)
      fail('JWT_ALGORITHMS', `${wrong} needs a public key; with JWT_SECRET use HS256, HS384 or HS512`);
    return clean({
      source: { kind: 'secret', secret: new TextEncoder().encode(vars.JWT_SECRET), algorithms },
    });
  }
  const wrongAsymmetric = requested?.find((alg) => !asymmetricAlgorithms.includes(alg));
  if (wrongAsymmetric) {
    fail('JWT_ALGORITHMS', `${wrongAsymmetric} is an HMAC algorithm; it needs JWT_SECRET, not a public key`);
  }
  if (vars.JWT_PUBLIC_KEY !== undefined) {
    const pem = vars.JWT_PUBLIC_KEY.replaceAll('\\n', '\n');
    // createPublicKey takes a private key as well, and derives its public half: the tray would
    // hold a key that signs any user's tokens, which a public key exists to keep elsewhere.
    if (/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(pem)) {
      fail(
        'JWT_PUBLIC_KEY',
        'holds a private key; give only its public key (openssl pkey -pubout), and keep the private key where tokens are signed',
      );
    }
    let key: KeyObject;
    try {
      key = createPublicKey(pem);
    } catch {
      return fail('JWT_PUBLIC_KEY', 'expected a PEM public key (-----BEGIN PUBLIC KEY----- ...)');
    }
    // Accepted, an algorithm the key cannot verify would refuse every token (401), each counted
    // against its caller's address.
    const fits = keyAlgorithms(key);
    const unfit = requested?.find((alg) => !fits.algorithms.includes(alg));
    if (unfit !== undefined) {
      fail('JWT_ALGORITHMS', `${unfit} cannot be verified with ${fits.kind}; use ${orList(fits.algorithms)}`);
    }
    return clean({
      source: { kind: 'publicKey', key, algorithms: requested ?? fits.algorithms.slice(0, 1) },
    });
  }
  // A JWKS is often an identity provider's (a tenant's) key set, which signs the tokens of every
  // application it serves: without an audience, theirs would pass here as users of this tray.
  if (vars.JWT_AUDIENCE === undefined) {
    fail(
      'JWT_AUDIENCE',
      'required with JWT_JWKS_URL: the key set also signs tokens for other applications of the same identity provider, and only the audience tells this tray’s apart',
    );
  }
  return clean({
    source: {
      kind: 'jwks',
      url: new URL(vars.JWT_JWKS_URL ?? ''),
      algorithms: requested ?? ['RS256', 'ES256'],
    },
  });
}

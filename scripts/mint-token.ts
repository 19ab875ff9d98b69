// Development tool: prints a signed access token for the tray API (`npm run mint-token -- --help`).
import { SignJWT, importPKCS8 } from 'jose';
import { readFileSync } from 'node:fs';
import { asymmetricAlgorithms, hmacAlgorithms } from '../shared/config/tray-api-config.ts';
import { UsageError } from '../shared/errors/usage-error.ts';
import { listEntries } from '../shared/text/list-entries.ts';
import { commandLinePath, envText, parseCli, runCli } from './lib/cli.ts';
import { devSecretOr } from './lib/dev-secrets.ts';

const usage = `Usage: npm run mint-token -- --user <id> [options]

Prints a JWT for the tray API's bearer scheme (Authorization: Bearer <token>).

Options:
  --user <id>          user id, put in "sub" (required)
  --ttl <duration>     lifetime, e.g. 30m, 1h, 30d (default 1h); "exp" is always set
  --private-key <file> PEM (PKCS#8) private key: signs with --alg (default RS256)
  --alg <alg>          HS256/HS384/HS512 with JWT_SECRET, or RS256/ES256/... with --private-key
  --issuer <iss>       "iss" claim (default: JWT_ISSUER)
  --audience <aud>     "aud" claim (default: JWT_AUDIENCE)
  --help               this text

Without --private-key the token is signed with JWT_SECRET from the environment, or, when it is
unset, with the secret \`npm start\` made for this machine (.data/dev-secrets.json, or under
STACK_DATA_DIR).`;

/** A span ahead, as jose reads one ("30m", "1.5 hours", "30d"): no sign, no "ago". */
const FUTURE_SPAN =
  /^\+?(\d+(?:\.\d+)?) ?(s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hr|hrs|hour|hours|d|day|days|w|week|weeks|y|yr|yrs|year|years)$/i;
/** Seconds in each of FUTURE_SPAN's units, by its first letter (a year as jose counts it). */
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3_600, d: 86_400, w: 604_800, y: 31_557_600 };

/**
 * The algorithm to sign with, checked against the key given: the tray's own lists, so a token
 * minted here is one it can verify. Checked before signing, since jose's errors for a mismatch
 * ("Key for the RS256 algorithm must be one of type CryptoKey...") do not say what to change.
 */
function signingAlg(alg: string | undefined, withPrivateKey: boolean): string {
  const usageLine = `\n${usage.split('\n')[0]}`;
  const chosen = alg ?? (withPrivateKey ? 'RS256' : 'HS256');
  if (asymmetricAlgorithms.includes(chosen)) {
    if (!withPrivateKey)
      throw new UsageError(`--alg ${chosen} signs with a private key: add --private-key <file>${usageLine}`);
    return chosen;
  }
  if (hmacAlgorithms.includes(chosen)) {
    if (withPrivateKey)
      throw new UsageError(`--alg ${chosen} signs with JWT_SECRET, not --private-key${usageLine}`);
    return chosen;
  }
  throw new UsageError(
    `--alg: expected one of ${hmacAlgorithms.join(', ')} (with JWT_SECRET) or ` +
      `${asymmetricAlgorithms.join(', ')} (with --private-key), got "${chosen}"${usageLine}`,
  );
}

async function main(): Promise<number> {
  const { values } = parseCli(
    {
      args: process.argv.slice(2),
      options: {
        user: { type: 'string' },
        ttl: { type: 'string', default: '1h' },
        'private-key': { type: 'string' },
        alg: { type: 'string' },
        issuer: { type: 'string' },
        audience: { type: 'string' },
        help: { type: 'boolean', default: false },
      },
      strict: true,
    },
    usage,
  );
  if (!values.user) throw new UsageError(`mint-token: --user is required\n\n${usage}`);
  let jwt = new SignJWT({}).setSubject(values.user).setIssuedAt();
  // Read here, not by jose, which also takes "-1h", "1h ago" and "0s": a token expired as it is
  // printed. What this reads, jose reads the same.
  const span = FUTURE_SPAN.exec(values.ttl);
  // jose rounds the span to whole seconds: `0.4s` is 0, a token expired as it is printed.
  const seconds =
    span === null ? 0 : Number(span[1]) * (UNIT_SECONDS[(span[2] ?? '').toLowerCase().charAt(0)] ?? 0);
  if (!(Math.round(seconds) >= 1)) {
    throw new UsageError('--ttl: expected a duration such as 30m, 1h or 30d');
  }
  jwt = jwt.setExpirationTime(values.ttl);
  const issuer = values.issuer ?? envText('JWT_ISSUER');
  const audience = values.audience ?? envText('JWT_AUDIENCE');
  if (issuer) jwt = jwt.setIssuer(issuer);
  if (audience) jwt = jwt.setAudience(audience);

  let token: string;
  const keyFile = values['private-key'];
  const alg = signingAlg(values.alg, keyFile !== undefined);
  if (keyFile) {
    let pem: string;
    try {
      pem = readFileSync(commandLinePath(keyFile), 'utf8');
    } catch (error) {
      throw new UsageError(
        `cannot read ${keyFile}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`,
      );
    }
    let key: Awaited<ReturnType<typeof importPKCS8>>;
    try {
      key = await importPKCS8(pem, alg);
    } catch (error) {
      throw new UsageError(`--private-key: not a PKCS#8 PEM key for ${alg} (${(error as Error).message})`);
    }
    token = await jwt.setProtectedHeader({ alg }).sign(key);
  } else {
    const ownSecret = envText('JWT_SECRET');
    // The stack drops its own secret when the operator's key is set (docs/configuration.md): a
    // token signed with it would be printed and then refused with 401.
    const ownKey = ['JWT_PUBLIC_KEY', 'JWT_JWKS_URL'].find((variable) => envText(variable));
    if (!ownSecret && ownKey)
      throw new UsageError(
        `${ownKey} is set: the tray verifies tokens with your key, so sign with its private key ` +
          '(--private-key <file>)',
      );
    const secret = devSecretOr('JWT_SECRET', ownSecret, 'JWT_SECRET');
    token = await jwt.setProtectedHeader({ alg }).sign(new TextEncoder().encode(secret));
  }
  // The tray verifies only the algorithms JWT_ALGORITHMS lists (HS256 alone with JWT_SECRET when
  // unset): a token signed otherwise was printed, exit 0, and refused with 401. Said, not refused:
  // the token may be for another deployment, configured otherwise.
  const listed = envText('JWT_ALGORITHMS');
  let accepted: readonly string[] | undefined = keyFile ? undefined : ['HS256'];
  try {
    if (listed !== undefined) accepted = listEntries(listed);
  } catch (error) {
    // A list the tray would refuse at start-up: this token is for no tray configured so.
    process.stderr.write(`warning: JWT_ALGORITHMS: ${(error as Error).message}\n`);
    accepted = undefined;
  }
  if (accepted !== undefined && !accepted.includes(alg)) {
    process.stderr.write(
      `warning: a tray with ${listed === undefined ? 'JWT_ALGORITHMS unset' : `JWT_ALGORITHMS=${listed}`} ` +
        `refuses ${alg} tokens (401): list ${alg} in its JWT_ALGORITHMS\n`,
    );
  }
  process.stdout.write(`${token}\n`);
  return 0;
}

runCli(main);

// Development tool: prints a signed access token for the tray API (`npm run mint-token -- --help`).
import { SignJWT, importPKCS8 } from 'jose';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError } from '../shared/errors/config-error.ts';
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

const { values } = parseArgs({
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
});

if (values.help) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}
if (!values.user) {
  process.stderr.write(`mint-token: --user is required\n\n${usage}\n`);
  process.exit(2);
}

let jwt = new SignJWT({}).setSubject(values.user).setIssuedAt().setExpirationTime(values.ttl);
const issuer = values.issuer ?? process.env.JWT_ISSUER;
const audience = values.audience ?? process.env.JWT_AUDIENCE;
if (issuer) jwt = jwt.setIssuer(issuer);
if (audience) jwt = jwt.setAudience(audience);

try {
  let token: string;
  if (values['private-key']) {
    const alg = values.alg ?? 'RS256';
    const key = await importPKCS8(readFileSync(values['private-key'], 'utf8'), alg);
    token = await jwt.setProtectedHeader({ alg }).sign(key);
  } else {
    const secret = devSecretOr('JWT_SECRET', process.env.JWT_SECRET, 'JWT_SECRET');
    token = await jwt
      .setProtectedHeader({ alg: values.alg ?? 'HS256' })
      .sign(new TextEncoder().encode(secret));
  }
  process.stdout.write(`${token}\n`);
} catch (error) {
  process.stderr.write(`mint-token: ${(error as Error).message}\n`);
  process.exit(error instanceof ConfigError ? 2 : 1);
}

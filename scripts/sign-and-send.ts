// Signs a JSON file as a webhook sender does and POSTs it to a receiver (docs/receiver.md).
//   npm run sign-and-send -- event.json [--url http://127.0.0.1:8080/webhooks] [--secret S]
//     [--scheme platform|standard-webhooks] [--header NAME] [--id ID] [--timestamp SECONDS]
// The secret comes from --secret or the WEBHOOK_SECRET environment variable (prefer the variable:
// command lines are visible to other users in `ps`), else, for the platform's scheme, from the
// secrets `npm start` made for this machine. The file's bytes are sent unchanged, because the
// signature covers the exact bytes.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseSignatureHeader, parseSignatureScheme } from '../receiver/signature/parse-signature-options.ts';
import { defaultSignatureHeader, standardSecretKey } from '../receiver/signature/parse-webhook-secrets.ts';
import { signBody } from '../receiver/signature/sign-body.ts';
import { standardSignatureHeaders } from '../receiver/signature/sign-standard.ts';
import { devSecretOr } from './lib/dev-secrets.ts';

const usage = `usage: sign-and-send <file.json> [--url URL] [--secret SECRET] [--scheme platform|standard-webhooks]
  [--header NAME] [--id ID] [--timestamp SECONDS]
  SECRET: or WEBHOOK_SECRET=... in the environment; default: the secret \`npm start\` made (platform scheme only)
  --scheme platform (default): Base64 HMAC-SHA256 of the body in --header (default ${defaultSignatureHeader})
  --scheme standard-webhooks: webhook-id (--id, default a new msg_ id), webhook-timestamp (--timestamp,
    default now) and webhook-signature; SECRET is the webhook's whsec_ secret`;

function fail(message: string): never {
  process.stderr.write(`sign-and-send: ${message}\n`);
  process.exit(2);
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    url: { type: 'string' },
    secret: { type: 'string' },
    scheme: { type: 'string', default: 'platform' },
    header: { type: 'string' },
    id: { type: 'string' },
    timestamp: { type: 'string' },
    help: { type: 'boolean' },
  },
});
const file = positionals[0];
if (values.help || !file) {
  process.stderr.write(`${usage}\n`);
  process.exit(values.help ? 0 : 2);
}
const url = values.url ?? `http://127.0.0.1:${process.env.RECEIVER_PORT ?? '8080'}/webhooks`;
const body = readFileSync(file);
/** The value `parse` makes, or exit 2 naming what was wrong and where. */
function orFail<T>(where: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    return fail(`${where}: ${(error as Error).message}`);
  }
}

const scheme = orFail('--scheme', () => parseSignatureScheme(values.scheme));
const given = values.secret ?? process.env.WEBHOOK_SECRET;
let headers: Record<string, string>;
if (scheme === 'platform') {
  const header = orFail('--header', () => parseSignatureHeader(values.header ?? defaultSignatureHeader));
  let secret: string;
  try {
    secret = devSecretOr('WEBHOOK_SECRET', given, 'WEBHOOK_SECRET');
  } catch (error) {
    fail((error as Error).message);
  }
  headers = { [header]: signBody(body, secret) };
} else {
  if (values.header !== undefined)
    fail('--header: a standard-webhooks signature always goes in webhook-signature');
  if (!given)
    fail("WEBHOOK_SECRET: not set; a standard-webhooks delivery is signed with the webhook's whsec_ secret");
  // The receiver's own check, so a mistyped secret is named here rather than answered 401.
  orFail('WEBHOOK_SECRET', () => standardSecretKey(given));
  const id = values.id ?? `msg_${randomUUID().replaceAll('-', '')}`;
  const timestamp = values.timestamp === undefined ? Math.floor(Date.now() / 1000) : Number(values.timestamp);
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) fail('--timestamp: expected Unix time in seconds');
  headers = standardSignatureHeaders(body, given, { id, timestamp });
}

const response = await fetch(url, {
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body,
});
process.stdout.write(`${response.status} ${await response.text()}\n`);
process.exit(response.status === 200 ? 0 : 1);

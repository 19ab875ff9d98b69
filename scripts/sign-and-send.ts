// Signs a JSON file exactly as the platform does and POSTs it to a receiver (docs/receiver.md).
//   npm run sign-and-send -- event.json [--url http://127.0.0.1:8080/webhooks] [--secret S]
// The secret comes from --secret or the WEBHOOK_SECRET environment variable (prefer the variable:
// command lines are visible to other users in `ps`), else from the secrets `npm start` made for
// this machine. The file's bytes are sent unchanged, because the signature covers the exact bytes.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { signBody } from '../receiver/signature/sign-body.ts';
import { devSecretOr } from './lib/dev-secrets.ts';

const usage =
  'usage: sign-and-send <file.json> [--url URL] [--secret SECRET]  (or WEBHOOK_SECRET=... in the environment; default: the secret `npm start` made)';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { url: { type: 'string' }, secret: { type: 'string' }, help: { type: 'boolean' } },
});
const file = positionals[0];
if (values.help || !file) {
  process.stderr.write(`${usage}\n`);
  process.exit(values.help ? 0 : 2);
}
let secret: string;
try {
  secret = devSecretOr('WEBHOOK_SECRET', values.secret ?? process.env.WEBHOOK_SECRET, 'WEBHOOK_SECRET');
} catch (error) {
  process.stderr.write(`sign-and-send: ${(error as Error).message}\n`);
  process.exit(2);
}
const url = values.url ?? `http://127.0.0.1:${process.env.RECEIVER_PORT ?? '8080'}/webhooks`;
const body = readFileSync(file);
const signature = signBody(body, secret);

const response = await fetch(url, {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-service-signature': signature },
  body,
});
process.stdout.write(`${response.status} ${await response.text()}\n`);
process.exit(response.status === 200 ? 0 : 1);

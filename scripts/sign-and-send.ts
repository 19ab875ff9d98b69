// Signs a JSON file as a webhook sender does and POSTs it to a receiver (docs/receiver.md).
//   npm run sign-and-send -- examples/events/comment.json [--url http://127.0.0.1:8080/webhooks] [--secret S]
//     [--scheme platform|standard-webhooks] [--header NAME] [--id ID] [--timestamp SECONDS] [--timeout SECONDS]
//     [--now]
// The secret comes from --secret or the WEBHOOK_SECRET environment variable (prefer the variable:
// command lines are visible to other users in `ps`), else, for the platform's scheme, from the
// secrets `npm start` made for this machine. The file's bytes are sent unchanged, because the
// signature covers the exact bytes; with --now the event is sent with its times moved to now
// (lib/dated-now.ts), as one JSON line, and that is what is signed.
import { fetchFailureCause } from '../shared/http/fetch-failure-cause.ts';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { UsageError } from '../shared/errors/usage-error.ts';
import { parseSignatureHeader, parseSignatureScheme } from '../receiver/signature/parse-signature-options.ts';
import { defaultSignatureHeader, standardSecretKey } from '../receiver/signature/parse-webhook-secrets.ts';
import { signBody } from '../receiver/signature/sign-body.ts';
import { standardSignatureHeaders } from '../receiver/signature/sign-standard.ts';
import { commandLinePath, envText, parseCli, runCli } from './lib/cli.ts';
import { datedNow } from './lib/dated-now.ts';
import { devSecretOr } from './lib/dev-secrets.ts';
import { stackAddresses } from './lib/stack-addresses.ts';

const usage = `usage: sign-and-send <file.json> [--url URL] [--secret SECRET] [--scheme platform|standard-webhooks]
  [--header NAME] [--id ID] [--timestamp SECONDS] [--timeout SECONDS] [--now]
  --now: every time in the event moved by the same amount, the latest to now (a sample shows in a tray
    for 90 days after its date only); without it the file's bytes are sent as they are
  --timeout: seconds to wait for the receiver's answer (default 10, at most 3600; receivers answer within 1.5 s)
  SECRET: or WEBHOOK_SECRET=... in the environment; default: the secret \`npm start\` made (platform scheme only)
  --scheme platform (default): Base64 HMAC-SHA256 of the body in --header (default ${defaultSignatureHeader})
  --scheme standard-webhooks: webhook-id (--id, default a new msg_ id), webhook-timestamp (--timestamp,
    default now) and webhook-signature; SECRET is the webhook's whsec_ secret`;

/** The value `parse` makes, or a UsageError naming what was wrong and where. */
function orFail<T>(where: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new UsageError(`${where}: ${(error as Error).message}`);
  }
}

async function main(): Promise<number> {
  const { values, positionals } = parseCli(
    {
      args: process.argv.slice(2),
      allowPositionals: true,
      options: {
        url: { type: 'string' },
        secret: { type: 'string' },
        scheme: { type: 'string', default: 'platform' },
        header: { type: 'string' },
        id: { type: 'string' },
        timestamp: { type: 'string' },
        timeout: { type: 'string', default: '10' },
        now: { type: 'boolean' },
        help: { type: 'boolean' },
      },
    },
    usage,
  );
  const typed = positionals[0];
  if (!typed) throw new UsageError(`sign-and-send: name the JSON file to send\n\n${usage}`);
  const file = commandLinePath(typed);
  if (positionals.length > 1) throw new UsageError(`one file at a time; got ${positionals.length}`);
  // Where npm start's receiver listens: RECEIVER_HOST (or HOST), RECEIVER_PORT and WEBHOOK_PATH, as
  // the stack reads them (an empty one is unset).
  const url = values.url ?? stackAddresses().webhooks;
  checkUrl(url);
  const timeoutSeconds = /^\d+$/.test(values.timeout) ? Number(values.timeout) : 0;
  // An hour is plenty for an answer due in 1.5 s; past setTimeout's longest delay it gave up at once.
  if (timeoutSeconds < 1 || timeoutSeconds > 3600)
    throw new UsageError('--timeout: expected a whole number of seconds from 1 to 3600');
  let body: Buffer;
  try {
    body = readFileSync(file);
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'unreadable'}`);
  }
  if (values.now === true) {
    let event: unknown;
    try {
      event = JSON.parse(body.toString('utf8'));
    } catch (error) {
      throw new UsageError(`--now: ${file} is not JSON: ${(error as Error).message}`);
    }
    body = Buffer.from(JSON.stringify(datedNow(event, new Date())));
  }

  const scheme = orFail('--scheme', () => parseSignatureScheme(values.scheme));
  const given = values.secret ?? envText('WEBHOOK_SECRET');
  let headers: Record<string, string>;
  if (scheme === 'platform') {
    // The platform's signature covers the body alone: an id or a time given would be dropped.
    for (const flag of ['id', 'timestamp'] as const) {
      if (values[flag] !== undefined)
        throw new UsageError(
          `--${flag}: only a standard-webhooks delivery carries one (--scheme standard-webhooks)`,
        );
    }
    const header = orFail('--header', () => parseSignatureHeader(values.header ?? defaultSignatureHeader));
    const secret = devSecretOr('WEBHOOK_SECRET', given, 'WEBHOOK_SECRET');
    headers = { [header]: signBody(body, secret) };
  } else {
    if (values.header !== undefined)
      throw new UsageError('--header: a standard-webhooks signature always goes in webhook-signature');
    if (!given)
      throw new UsageError(
        "WEBHOOK_SECRET: not set; a standard-webhooks delivery is signed with the webhook's whsec_ secret",
      );
    // The receiver's own check, so a mistyped secret is named here rather than answered 401.
    orFail('WEBHOOK_SECRET', () => standardSecretKey(given));
    const id = values.id ?? `msg_${randomUUID().replaceAll('-', '')}`;
    if (values.timestamp !== undefined && !/^\d+$/.test(values.timestamp))
      throw new UsageError('--timestamp: expected Unix time in seconds');
    const timestamp =
      values.timestamp === undefined ? Math.floor(Date.now() / 1000) : Number(values.timestamp);
    if (!Number.isSafeInteger(timestamp)) throw new UsageError('--timestamp: expected Unix time in seconds');
    headers = standardSignatureHeaders(body, given, { id, timestamp });
  }

  let response: Response;
  try {
    // A receiver that takes the connection and never answers would hold the tool for minutes.
    const signal = AbortSignal.timeout(timeoutSeconds * 1000);
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
      signal,
      // Followed, a 301/302/303 became a GET without the body whose 200 read as delivered, and a
      // 307/308 to another host carried the signature there.
      redirect: 'manual',
    });
    process.stdout.write(`${response.status} ${await response.text()}\n`);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location !== null)
      process.stderr.write(
        `the receiver redirected to ${location}: not followed (a webhook is sent once); ` +
          'give --url the address it names\n',
      );
  } catch (error) {
    if ((error as Error).name === 'TimeoutError')
      throw new Error(`no answer from ${url} within ${timeoutSeconds} s (--timeout)`);
    throw new Error(`cannot reach ${url}: ${fetchFailureCause(error) ?? (error as Error).message}`);
  }
  return response.status === 200 ? 0 : 1;
}

runCli(main);

/**
 * `--url` as fetch can send it. One with a user or password is refused here: fetch's own refusal
 * repeats the URL, password and all, on the terminal.
 */
function checkUrl(url: string): void {
  const parsed = URL.parse(url);
  if (parsed?.protocol !== 'http:' && parsed?.protocol !== 'https:')
    throw new UsageError('--url: expected an http:// or https:// URL');
  if (parsed.username !== '' || parsed.password !== '')
    throw new UsageError('--url: expected a URL without a user or password');
}

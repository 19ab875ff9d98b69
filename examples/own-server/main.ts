import { loadOrExit } from '../../shared/config/load-or-exit.ts';
import { listenHostOf, listenHostVariable } from '../../shared/config/listen-config.ts';
import { createAllowlist } from '../../receiver/allowlist/create-allowlist.ts';
import { loadReceiverConfig } from '../../receiver/receiver-config.ts';
import { hostPort } from '../../shared/http/host-port.ts';
import { ListenError } from '../../shared/http/listen.ts';
import { startOwnServer, type VerifiedEvent } from './start-own-server.ts';

/**
 * The own-server example as a program: verifies deliveries with the receiver's variables
 * (WEBHOOK_SECRETS, WEBHOOK_SIGNATURE_SCHEME, WEBHOOK_SIGNATURE_HEADER, the allowlist's and
 * TRUST_PROXY, ...) as the receiver does, and prints one line per event. Replace `handle` with your own code (docs/receiver.md#verifying-in-your-own-http-server).
 */
const handle = (event: VerifiedEvent) => {
  process.stdout.write(`${event.webhook} ${event.event} ${event.key}\n`);
};

// 8090 unless RECEIVER_PORT says otherwise: beside `npm start`'s receiver (8080), not on it.
const config = loadOrExit(() =>
  loadReceiverConfig({ ...process.env, RECEIVER_PORT: process.env.RECEIVER_PORT || '8090' }),
);
const host = listenHostOf(config, config.RECEIVER_HOST);
if (config.WEBHOOK_ALLOWLIST === 'off')
  process.stderr.write(
    'WEBHOOK_ALLOWLIST=off: webhooks are accepted from any address (local development only)\n',
  );
const server = await startOwnServer(
  {
    secrets: config.WEBHOOK_SECRETS,
    // Check 1 as the receiver's: the platform's addresses unless WEBHOOK_ALLOWLIST=off.
    ...(config.WEBHOOK_ALLOWLIST === 'on'
      ? { allowlist: createAllowlist(config.WEBHOOK_REGIONS, config.WEBHOOK_ALLOW_CIDRS) }
      : {}),
    trustProxy: config.TRUST_PROXY,
    timestampToleranceSeconds: config.WEBHOOK_TOLERANCE_SECONDS,
    port: config.RECEIVER_PORT,
    host,
    path: config.WEBHOOK_PATH,
    maxBodyBytes: config.WEBHOOK_MAX_BODY_BYTES,
    // The sender only sees a 503 and delivers again; the reason is printed here.
    onFailed: ({ error, event }) => {
      process.stderr.write(`${event.webhook} ${event.event} ${event.key} failed: ${error.message}\n`);
    },
  },
  handle,
).catch((error: unknown) => {
  // A port in use or not allowed, or an address not this machine's: one line naming the variable
  // to change (the port's or the host's), as the receiver's, not a stack trace.
  const code = (error as NodeJS.ErrnoException).code;
  if (code === undefined) throw error;
  const refused = new ListenError(host, config.RECEIVER_PORT, code, {
    portVariable: 'RECEIVER_PORT',
    hostVariable: listenHostVariable(config, 'RECEIVER_HOST', config.RECEIVER_HOST),
  });
  process.stderr.write(`${refused.message}\n`);
  process.exit(1);
});
// Where to send, as a URL; every interface is reached on loopback.
const sendTo = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
process.stdout.write(`listening on http://${hostPort(sendTo, server.port)}${config.WEBHOOK_PATH}\n`);

const stop = () => {
  // A close that fails (Redis gone) still ends the process, with one line, not a stack trace.
  server.close().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`stopped without closing cleanly: ${(error as Error).message}\n`);
      process.exit(1);
    },
  );
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);

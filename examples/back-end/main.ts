import { fetchFailureCause } from '../../shared/http/fetch-failure-cause.ts';
import { z } from 'zod';
import { UsageError } from '../../shared/errors/usage-error.ts';
import { envText, parseCli, runCli, scriptEnv } from '../../scripts/lib/cli.ts';
import { devSecretOr } from '../../scripts/lib/dev-secrets.ts';
import { stackAddresses } from '../../scripts/lib/stack-addresses.ts';
import { listTray } from './list-tray.ts';

const usage = `
Usage: npm run example:back-end -- --user <userId> [--limit <n>] [--locale <locale>]

Lists a user's tray as an app's back end would, through the client package: the unread count,
then the newest records (* marks the unread ones). TRAY_URL names the tray service (unset: \`npm
start\`'s, from TRAY_PORT and HOST as the stack reads them, default http://127.0.0.1:8081);
JWT_SECRET is its key (unset: the secret \`npm start\` made for this machine).
`;

/**
 * A fetch that never reached the tray service, named with its address, why, and the variables that
 * say where it is; other errors (the service's refusals) pass through.
 */
function unreachable(trayUrl: string, error: unknown): unknown {
  const why = fetchFailureCause(error);
  if (!(error instanceof TypeError) || why === undefined) return error;
  return new Error(
    `cannot reach the tray service at ${trayUrl.replace(/\/+$/, '')}: ${why}: is npm start running? TRAY_URL, or TRAY_PORT and HOST, say where it is`,
  );
}

runCli(async () => {
  const { values } = parseCli(
    {
      args: process.argv.slice(2),
      options: { user: { type: 'string' }, limit: { type: 'string' }, locale: { type: 'string' } },
    },
    usage,
  );
  const env = scriptEnv({
    TRAY_URL: z
      .url({ error: 'expected a URL' })
      // fetch refuses such a URL with a message that repeats it, password and all.
      .refine((url) => !/^[a-z]+:\/\/[^/]*@/i.test(url), 'expected a URL without a user or password')
      // Where `npm start` puts it, as try-stack finds it: a shell that set TRAY_PORT for the stack
      // finds it with no more said.
      .default(stackAddresses(process.env).tray),
  });
  if (!values.user) throw new UsageError(`--user is required\n${usage}`);
  const limit = Number(values.limit ?? 20);
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError(`--limit: expected a whole number from 1`);
  const listing = await listTray({
    trayUrl: env.TRAY_URL,
    jwtSecret: devSecretOr('JWT_SECRET', envText('JWT_SECRET'), 'JWT_SECRET'),
    userId: values.user,
    limit,
    ...(values.locale ? { locale: values.locale } : {}),
  }).catch((error: unknown) => {
    throw unreachable(env.TRAY_URL, error);
  });
  process.stdout.write(`${values.user}: ${listing.totalUnreadCount} unread\n`);
  for (const record of listing.records) {
    const when = new Date(record.lastUpdate).toISOString();
    process.stdout.write(`${record.hasRead ? ' ' : '*'} ${when} ${record.description}\n`);
  }
  return 0;
});

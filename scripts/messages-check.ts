/**
 * `npm run messages:check`: lints the shipped catalogues plus TRAY_MESSAGES_DIR with exactly the
 * checks the tray service runs at start-up. Every problem is one line,
 * `file: key: problem`; exit 1 if there is any (2 for a bad argument or variable). Messages a locale lacks (it shows the default
 * locale's text) are listed as notes and do not fail the check.
 */
import { trayMessagesShape } from '../shared/config/tray-messages-config.ts';
import { formatProblem } from '../shared/errors/catalogue-error.ts';
import { loadCatalogues } from '../tray-service/messages/load-catalogues.ts';
import { DELETED_USER_KEY, messageKeys } from '../tray-service/messages/message-keys.ts';
import { parseCli, runCli, scriptEnv } from './lib/cli.ts';

const usage = `Usage: npm run messages:check

Checks the shipped message catalogues and those of TRAY_MESSAGES_DIR with the tray service's own
start-up checks, for DEFAULT_LOCALE (default en). Prints one line per problem (file: key: problem)
and notes for messages a locale lacks. It takes no arguments.

Exit code: 0 no problem, 1 problems, 2 bad arguments or a bad variable.`;

async function main(): Promise<number> {
  // No options: anything given is a mistake (a path meant for TRAY_MESSAGES_DIR, say), refused
  // rather than ignored while the check runs on something else.
  parseCli({ args: process.argv.slice(2), options: {}, strict: true, allowPositionals: false }, usage);
  const config = scriptEnv(trayMessagesShape);
  const { messages, problems, fallbacks } = loadCatalogues({
    defaultLocale: config.DEFAULT_LOCALE,
    overrideDir: config.TRAY_MESSAGES_DIR,
  });

  for (const { locale, key } of fallbacks) {
    process.stdout.write(`note: ${locale}: ${key}: missing, shows the ${config.DEFAULT_LOCALE} message\n`);
  }
  if (problems.length > 0) {
    for (const problem of problems) process.stderr.write(`${formatProblem(problem)}\n`);
    process.stderr.write(`messages:check: ${problems.length} problem(s)\n`);
    return 1;
  }
  const locales = [...messages.keys()].sort();
  // The deleted user's name is a catalogue entry but not a message.
  const messageCount = [...messageKeys.keys()].filter((key) => key !== DELETED_USER_KEY).length;
  process.stdout.write(
    `messages:check: ok, ${locales.length} locales (${locales.join(', ')}), ${messageCount} messages, default ${config.DEFAULT_LOCALE}\n`,
  );
  return 0;
}

runCli(main);

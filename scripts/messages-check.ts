/**
 * `npm run messages:check`: lints the shipped catalogues plus TRAY_MESSAGES_DIR with exactly the
 * checks the tray service runs at start-up. Every problem is one line,
 * `file: key: problem`; exit 1 if there is any. Messages a locale lacks (it shows the default
 * locale's text) are listed as notes and do not fail the check.
 */
import { loadOrExit } from '../shared/config/load-or-exit.ts';
import { parseEnv } from '../shared/config/parse-env.ts';
import { trayMessagesShape } from '../shared/config/tray-messages-config.ts';
import { formatProblem } from '../shared/errors/catalogue-error.ts';
import { loadCatalogues } from '../tray-service/messages/load-catalogues.ts';
import { messageKeys } from '../tray-service/messages/message-keys.ts';

const config = loadOrExit(() => parseEnv(trayMessagesShape, process.env));
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
  process.exit(1);
}
const locales = [...messages.keys()].sort();
process.stdout.write(
  `messages:check: ok, ${locales.length} locales (${locales.join(', ')}), ${messageKeys.size} messages, default ${config.DEFAULT_LOCALE}\n`,
);

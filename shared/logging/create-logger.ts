import { pino, type DestinationStream, type LevelWithSilent, type LogFn, type Logger } from 'pino';

import { redactUrlCredentials } from './redact-url-credentials.ts';
import { serializeError } from './serialize-error.ts';

export type { Logger };

/**
 * Paths that may carry credentials. Redaction is applied by pino before serialisation,
 * so a secret never reaches the log stream even when a whole request or config object is logged.
 */
const redactPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-service-signature"]',
  'req.headers["x-legacy-signature"]',
  'req.headers["webhook-signature"]',
  'req.query.ticket',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'headers["x-service-signature"]',
  'headers["x-legacy-signature"]',
  'headers["webhook-signature"]',
  'query.ticket',
  'config.WEBHOOK_SECRETS',
  'config.JWT_SECRET',
  'config.ADMIN_TOKEN',
  'config.ADMIN_JWT_SECRET',
  'config.METRICS_TOKEN',
  'config.MODERATION_WEBHOOK_SECRET',
  'config.REDIS_URL',
  // The target made from REDIS_URL: the URL itself for one server, its credentials on a cluster.
  'config.redis',
  'config.MONGODB_URI',
  'config.DATABASE_URL',
  '*.secret',
  '*.secrets',
  '*.password',
  '*.token',
  // A Redis command's arguments (ioredis's errors carry the failed command; an AUTH's is the
  // password): serializeError drops them from errors; these catch one logged some other way.
  'command.args',
  '*.command.args',
  '*.*.command.args',
];

/**
 * A line logged with an error and no message: pino takes the error's message as the line's `msg`,
 * as it is, past the serializer that cleans the error's own copy. Given here, cleaned the same way.
 */
function withMessageOfError(this: Logger, args: Parameters<LogFn>, method: LogFn): void {
  const [first] = args;
  if (args.length === 1 && typeof first === 'object' && first !== null) {
    const { err } = first as { err?: unknown };
    if (err instanceof Error && typeof err.message === 'string')
      return method.apply(this, [first, redactUrlCredentials(err.message)]);
  }
  return method.apply(this, args);
}

/** The service's logger; `destination` (stdout by default) lets a test read the lines it writes. */
export function createLogger(options: {
  name: string;
  level: LevelWithSilent;
  destination?: DestinationStream;
}): Logger {
  return pino(
    {
      name: options.name,
      level: options.level,
      redact: { paths: redactPaths, censor: '[redacted]' },
      serializers: { err: serializeError },
      hooks: { logMethod: withMessageOfError },
      base: { service: options.name },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    // Written as logged, as Node writes stdout to a pipe or a file itself. pino's own default hands
    // each line to libuv's threads and writes what is left at exit beside them: a line still
    // waiting for a busy thread came after the exit's, or never (a fatal line, a shutdown's steps).
    options.destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

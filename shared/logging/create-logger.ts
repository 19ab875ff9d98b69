import { pino, type Logger, type LevelWithSilent } from 'pino';

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
  'headers.authorization',
  'headers["x-service-signature"]',
  'config.WEBHOOK_SECRETS',
  'config.JWT_SECRET',
  'config.ADMIN_TOKEN',
  'config.REDIS_URL',
  'config.MONGODB_URI',
  'config.DATABASE_URL',
  '*.secret',
  '*.secrets',
  '*.password',
  '*.token',
];

export function createLogger(options: { name: string; level: LevelWithSilent }): Logger {
  return pino({
    name: options.name,
    level: options.level,
    redact: { paths: redactPaths, censor: '[redacted]' },
    base: { service: options.name },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}

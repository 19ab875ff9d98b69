import type { Logger } from '../logging/create-logger.ts';

/** How a check that refuses a Redis the services must not use runs, and whom it tells. */
export interface RedisRefusalOptions {
  logger?: Pick<Logger, 'warn'>;
  /** How long start-up waits for a first connection; a receiver must start while Redis is down. */
  startupWaitMs?: number;
  /** Called with the one-line message; the default writes it to stderr and exits with code 1. */
  onRefused?: (message: string) => void;
}

/** The refusal's default: one line on stderr, exit code 1 (before anything is accepted at start-up). */
export function exitWithMessage(message: string): void {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

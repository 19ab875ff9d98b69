import type { Logger } from '../logging/create-logger.ts';

/**
 * An exception nothing caught, or a rejection nothing handled, leaves the process in a state no
 * code planned for: it ends with one structured fatal line (the error, its stack in the line's
 * `err`) and exit code 1, for the orchestrator to restart it, instead of Node's bare stack trace
 * on stderr that log pipelines split into unrelated lines.
 */
export function exitOnUncaught(logger: Logger): void {
  process.on('uncaughtException', (error: Error) => {
    logger.fatal({ err: error }, `uncaught exception: ${error.message}; exiting`);
    process.exit(1);
  });
  process.on('unhandledRejection', (reason: unknown) => {
    const message = reason instanceof Error ? reason.message : String(reason);
    logger.fatal({ err: reason }, `unhandled rejection: ${message}; exiting`);
    process.exit(1);
  });
}

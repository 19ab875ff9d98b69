import type { Logger } from '../logging/create-logger.ts';
import { redactUrlCredentials } from '../logging/redact-url-credentials.ts';

/**
 * An exception nothing caught, or a rejection nothing handled, leaves the process in a state no
 * code planned for: it ends with one structured fatal line (the error, its stack in the line's
 * `err`) and exit code 1, for the orchestrator to restart it, instead of Node's bare stack trace
 * on stderr that log pipelines split into unrelated lines.
 */
export function exitOnUncaught(logger: Logger): void {
  // Anything may be thrown (`throw 'text'`, `throw null`): read as an Error, the handler itself
  // threw, and Node ended the process with its bare stack and no fatal line.
  process.on('uncaughtException', (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    // The line's text as the err serializer shows the message: without a URL's credentials.
    logger.fatal({ err: error }, `uncaught exception: ${redactUrlCredentials(message)}; exiting`);
    process.exit(1);
  });
  process.on('unhandledRejection', (reason: unknown) => {
    const message = reason instanceof Error ? reason.message : String(reason);
    logger.fatal({ err: reason }, `unhandled rejection: ${redactUrlCredentials(message)}; exiting`);
    process.exit(1);
  });
}

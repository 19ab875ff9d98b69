import type { Logger } from '../logging/create-logger.ts';
import { redactUrlCredentials } from '../logging/redact-url-credentials.ts';
import { withTimeout } from '../time/with-timeout.ts';

/**
 * How long start-up waits for a dependency that does not answer (Redis, the tray's database)
 * before it gives up with exit code 1. Long enough for a dependency started beside the process
 * (a compose stack, a pod's sidecar, a database restarting) to come up; short enough that an
 * address that is simply wrong ends in a clear failure the orchestrator reports.
 */
export const STARTUP_WAIT_MS = 60_000;

/** A dependency start-up could not reach: its message names the variable that points at it. */
export class DependencyError extends Error {
  override name = 'DependencyError';
  readonly variable: string;

  constructor(variable: string, message: string) {
    super(message);
    this.variable = variable;
  }
}

export interface WaitForDependencyOptions<T> {
  /** The variable that points at the dependency (DATABASE_URL, REDIS_URL, ...), named in each line. */
  variable: string;
  /** One attempt: resolves once the dependency answers. */
  connect: () => Promise<T>;
  /** Errors retrying cannot fix (the database does not exist, authentication failed). */
  isPermanent?: (error: unknown) => boolean;
  logger: Pick<Logger, 'warn' | 'info'>;
  waitMs?: number;
  /** Wait before the second attempt; doubles per attempt up to maxRetryMs. */
  firstRetryMs?: number;
  maxRetryMs?: number;
  /**
   * Default true: each attempt is bounded by what is left of `waitMs` and by `maxRetryMs`, so one
   * that never settles (a dependency that accepts connections but never answers) still fails.
   * False only for an attempt that may rightly run long once the dependency answers (the tray's
   * storage also runs its schema migrations, which may build an index for minutes): bounding it
   * would give up mid-migration and start again, for ever. Such an attempt must bound its own wait
   * for the dependency's first answer, or a dependency that never answers holds start-up for ever.
   */
  boundAttempts?: boolean;
  /** Ends the wait (a shutdown signal during start-up). */
  stop?: AbortSignal;
}

/**
 * An error's message with any URL credentials masked: never a password in the log. Node's error
 * for a name whose every address refused (`localhost`: ::1 and 127.0.0.1) is an AggregateError
 * with no message of its own: its errors' messages say why.
 */
const describe = (error: unknown): string => {
  if (!(error instanceof Error)) return redactUrlCredentials(String(error));
  const inner =
    error instanceof AggregateError
      ? error.errors.map((each: unknown) => (each instanceof Error ? each.message : '')).filter(Boolean)
      : [];
  const code = (error as NodeJS.ErrnoException).code;
  return redactUrlCredentials(error.message || inner.join('; ') || code || error.name);
};

/**
 * Start-up's connection to a dependency: attempts again with backoff while it does not answer, for
 * at most `waitMs` (each attempt bounded by what is left of it and by `maxRetryMs`), logging one warning each time the failure changes (not one per attempt) and one
 * line once it answers. Rejects with a DependencyError at once for a permanent error, when the
 * wait is over, or when `stop` aborts.
 */
export async function waitForDependency<T>(options: WaitForDependencyOptions<T>): Promise<T> {
  const { variable, logger } = options;
  const waitMs = options.waitMs ?? STARTUP_WAIT_MS;
  const maxRetryMs = options.maxRetryMs ?? 5_000;
  const started = performance.now();
  let retryMs = options.firstRetryMs ?? 250;
  let lastFailure: string | undefined;
  const stopped = new Promise<never>((_, reject) => {
    const abort = () =>
      reject(new DependencyError(variable, `start-up stopped while waiting for ${variable} to answer`));
    if (options.stop?.aborted) abort();
    options.stop?.addEventListener('abort', abort, { once: true });
  });
  stopped.catch(() => undefined);
  for (;;) {
    try {
      // An attempt on a dependency that accepts connections but never answers (a stopped Redis:
      // ioredis's ready check is never answered; a hung database) never settles by itself: bound
      // it, so it fails like any other attempt and the wait still ends in time. One message
      // whatever the bound, so a lasting hang is warned about once.
      const attemptMs = Math.max(1, Math.min(waitMs - (performance.now() - started), maxRetryMs));
      const attempt =
        options.boundAttempts === false
          ? options.connect()
          : withTimeout(options.connect(), attemptMs, 'no answer to the attempt');
      const connected = await Promise.race([attempt, stopped]);
      if (lastFailure !== undefined) {
        logger.info({ variable }, `${variable} answers: start-up goes on`);
      }
      return connected;
    } catch (error) {
      if (error instanceof DependencyError) throw error;
      const failure = describe(error);
      if (options.isPermanent?.(error)) {
        throw new DependencyError(variable, `${variable}: ${failure} (retrying cannot fix this)`);
      }
      const waitedMs = performance.now() - started;
      if (waitedMs + retryMs > waitMs) {
        throw new DependencyError(
          variable,
          `${variable} did not answer within ${Math.round(waitMs / 1_000)} s of start-up: ${failure}`,
        );
      }
      if (failure !== lastFailure) {
        logger.warn(
          { variable, err: failure, waitMs },
          `${variable} does not answer at start-up; trying again with backoff`,
        );
        lastFailure = failure;
      }
      await Promise.race([new Promise((resolve) => setTimeout(resolve, retryMs)), stopped]);
      retryMs = Math.min(retryMs * 2, maxRetryMs);
    }
  }
}

/**
 * waitForDependency at a service's start-up: SIGTERM or SIGINT ends the wait, and a dependency it
 * gives up on ends the process with one fatal line naming the variable (exit 1), instead of a
 * stack trace.
 */
export async function dependencyOrExit<T>(
  logger: Logger,
  options: Omit<WaitForDependencyOptions<T>, 'logger' | 'stop'>,
): Promise<T> {
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    return await waitForDependency({ ...options, logger, stop: controller.signal });
  } catch (error) {
    if (!(error instanceof DependencyError)) throw error;
    logger.fatal({ variable: error.variable }, error.message);
    process.exit(1);
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

import type { Logger } from '../logging/create-logger.ts';

/**
 * How long a clean shutdown may take before the process exits anyway. Orchestrators send SIGKILL
 * 10 s after SIGTERM by default (Kubernetes' terminationGracePeriodSeconds, Docker's stop timeout):
 * exiting first, with a log line saying so, is better than being killed mid-write with no word.
 * Whatever a cut-short shutdown leaves is safe to leave: unfinished jobs are picked up again as
 * stalled jobs, acknowledged events are in the queue or the spool.
 */
export const SHUTDOWN_DEADLINE_MS = 8_000;

/**
 * Runs `shutdown` once on SIGTERM or SIGINT, then exits, within SHUTDOWN_DEADLINE_MS whatever its
 * dependencies do. A second signal exits at once, so an operator pressing Ctrl-C twice is never
 * stuck behind a hung dependency. Returns a stop for a failure of the process's own (a listener
 * that cannot bind once the worker runs): the same shutdown, then exit 1.
 */
export function onShutdown(
  logger: Logger,
  shutdown: () => Promise<void>,
  deadlineMs = SHUTDOWN_DEADLINE_MS,
): (reason: string) => void {
  let stopping = false;
  let exitCode = 0;
  /** Runs the shutdown once, said as `cause` (a signal, or the process's own failure). */
  const begin = (cause: { signal: NodeJS.Signals } | { reason: string }) => {
    stopping = true;
    logger.info(cause, 'shutting down');
    setTimeout(() => {
      logger.warn(
        { deadlineMs },
        'shutdown did not finish in time (a dependency does not answer): exiting now',
      );
      process.exit(1);
    }, deadlineMs).unref();
    shutdown()
      .then(() => {
        logger.info('stopped');
        process.exit(exitCode);
      })
      .catch((error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      });
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (!stopping) return begin({ signal });
    logger.warn({ signal }, 'second signal: exiting now');
    process.exit(1);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // A failure exits 1, also one while a signal's shutdown runs (which goes on).
  return (reason) => {
    exitCode = 1;
    if (!stopping) begin({ reason });
  };
}

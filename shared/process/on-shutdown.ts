import type { Logger } from '../logging/create-logger.ts';

/**
 * How long a clean shutdown may take before the process exits anyway, by default
 * (SHUTDOWN_DEADLINE_MS sets it). Orchestrators send SIGKILL some time after SIGTERM: Docker's
 * stop timeout is 10 s, Kubernetes' terminationGracePeriodSeconds 30 s. Exiting first, with a log
 * line saying so, is better than being killed mid-write with no word. Whatever a cut-short
 * shutdown leaves is safe to leave: unfinished jobs are picked up again as stalled jobs,
 * acknowledged events are in the queue or the spool.
 */
export const SHUTDOWN_DEADLINE_MS = 8_000;

/** Signals this close together are one (scripts/dev-stack.ts does the same for `npm start`). */
const SAME_SIGNAL_MS = 250;

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
  /** When the first signal came (performance.now()): a second one later on exits at once. */
  let signalledAt: number | undefined;
  let exitCode = 0;
  /** Runs the shutdown once, said as `cause` (a signal, or the process's own failure). */
  const begin = (cause: { signal: NodeJS.Signals } | { reason: string }) => {
    stopping = true;
    // With its deadline: what SHUTDOWN_DEADLINE_MS gave this process, when it matters.
    logger.info({ ...cause, deadlineMs }, 'shutting down');
    // Not unref'd: with nothing else left running, a shutdown that never settled let the process
    // exit 0 before it, with no word.
    setTimeout(() => {
      logger.warn(
        { deadlineMs },
        'shutdown did not finish in time (a dependency does not answer): exiting now',
      );
      process.exit(1);
    }, deadlineMs);
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
    const now = performance.now();
    if (signalledAt === undefined) {
      signalledAt = now;
      // A signal while the process stops for a failure of its own (an orchestrator's SIGTERM) is
      // no operator's second one: the shutdown goes on.
      if (!stopping) begin({ signal });
      return;
    }
    // One Ctrl-C under `npm run` arrives twice within milliseconds (the terminal's to the whole
    // process group, and npm's passed on): one signal.
    if (now - signalledAt < SAME_SIGNAL_MS) return;
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

// How long the development stack waits for a service to exit after its signal before SIGKILL.
import { SHUTDOWN_DEADLINE_MS } from '../../shared/process/on-shutdown.ts';

/**
 * After the first Ctrl-C: a service exits within its own deadline, even on a dependency that does
 * not answer; the margin is for a loaded machine. Past it, the service's event loop is not running
 * (blocked, or the process stopped), so its own deadline cannot fire either.
 */
export const SERVICE_STOP_MS = SHUTDOWN_DEADLINE_MS + 4_000;

/** After the second Ctrl-C, which a service takes as "exit now". */
export const FORCED_STOP_MS = 2_000;

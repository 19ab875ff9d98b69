// How long the development stack waits for a service to exit after its signal before SIGKILL.
import { opsShape } from '../../shared/config/ops-config.ts';
import { SHUTDOWN_DEADLINE_MS } from '../../shared/process/on-shutdown.ts';

/**
 * After the first Ctrl-C: a service exits within its own deadline (SHUTDOWN_DEADLINE_MS, as the
 * services read it from the environment the stack passes them), even on a dependency that does
 * not answer; the margin is for a loaded machine. Past it, the service's event loop is not running
 * (blocked, or the process stopped), so its own deadline cannot fire either. A value the services
 * would refuse stops them at start: the default's then.
 */
export function serviceStopMs(env: NodeJS.ProcessEnv = process.env): number {
  const deadline = opsShape.SHUTDOWN_DEADLINE_MS.safeParse(env.SHUTDOWN_DEADLINE_MS);
  return (deadline.success ? deadline.data : SHUTDOWN_DEADLINE_MS) + 4_000;
}

/** After the second Ctrl-C, which a service takes as "exit now". */
export const FORCED_STOP_MS = 2_000;

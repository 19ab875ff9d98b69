import { rmSync } from 'node:fs';
import { stopStarted } from './started-processes.ts';

/** What a tool stops at its end or on a signal: a server it started, a database it made. */
export interface Stoppable {
  stop(): Promise<void>;
}

/**
 * Ctrl-C, SIGTERM from a supervisor or `timeout`, or SIGHUP (the terminal or SSH session closed)
 * during a long-running tool: runs `stop` and then exits with 130, 143 or 129, instead of Node's default of exiting at once, which leaves the
 * servers and processes the tool started running and its scratch folder behind. Answers `stop`
 * made to run once, whoever asks first (the end of the run, a failure, a signal): call it in the
 * tool's own `finally`. After `stop`, whatever the tool started and held no handle to yet (a
 * server still starting when the signal came) is stopped, and only then is `scratch`, the tool's
 * folder, removed: a server still writing in it would leave it behind.
 */
export function stopOnSignal(stop: () => Promise<void>, scratch?: string): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  const once = () =>
    (stopping ??= stop()
      .finally(stopStarted)
      .finally(() => {
        if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
      }));
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const)
    process.once(signal, () => void once().finally(() => process.exit(code)));
  return once;
}

/**
 * What `starting` answers, or, when it fails, `stop` (stopOnSignal's) run before its error is
 * thrown: a start-up step that fails after servers started leaves none of them running.
 */
export async function orStop<T>(starting: Promise<T>, stop: () => Promise<void>): Promise<T> {
  try {
    return await starting;
  } catch (error) {
    await stop();
    throw error;
  }
}

import type { ChildProcess } from 'node:child_process';

/** Whether a child process has ended, by an exit code or by a signal. */
export const hasExited = (child: ChildProcess): boolean =>
  child.exitCode !== null || child.signalCode !== null;

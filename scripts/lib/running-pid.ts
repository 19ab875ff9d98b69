import { existsSync, readFileSync } from 'node:fs';

/**
 * The pid a pid file names (its first line) while that process runs and is `command`; undefined for
 * no file, or one a process left when it was killed. After a reboot or a crash the pid may belong
 * to another program, so where Linux's /proc says what runs, its command line must name `command`.
 */
export function runningPid(pidFile: string, command: string): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]?.trim());
  } catch {
    return undefined;
  }
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it runs, as another account (PostgreSQL's, when the stack runs as root).
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  if (!existsSync('/proc/self')) return pid;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(command) ? pid : undefined;
  } catch {
    return undefined;
  }
}

import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { procStatFields } from '../../scripts/lib/proc-stat.ts';

/**
 * The processes working in `dir` or below it (Linux's /proc): Redis and PostgreSQL change into
 * their data folders at start, so a server a stack left behind shows here, whatever its own title
 * says (redis-server renames itself to its address).
 */
export function processesIn(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cwd: string;
    try {
      cwd = readlinkSync(`/proc/${entry}/cwd`);
    } catch {
      continue; // gone meanwhile, or a zombie
    }
    if (cwd === dir || cwd.startsWith(`${dir}/`)) pids.push(Number(entry));
  }
  return pids;
}

/** The fields of /proc/<pid>/stat after the command's name (procStatFields), or undefined once gone. */
function statOf(pid: number): string[] | undefined {
  try {
    return procStatFields(pid);
  } catch {
    return undefined;
  }
}

/** The processes whose parent is `pid`. */
export function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry) && statOf(Number(entry))?.[1] === String(pid))
    .map(Number);
}

/** A process's command line, its arguments joined by spaces ('' once it is gone). */
export function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

/** Whether `pid` still runs (a zombie, dead but not yet reaped, does not). */
export function isRunning(pid: number): boolean {
  const state = statOf(pid)?.[0];
  return state !== undefined && state !== 'Z';
}

/** Lets a process stopped with SIGSTOP run again; one already gone is left alone. */
export function resume(pid: number): void {
  try {
    process.kill(pid, 'SIGCONT');
  } catch {
    // gone
  }
}

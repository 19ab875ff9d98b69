import { readFileSync } from 'node:fs';

/**
 * The fields of /proc/<pid>/stat (Linux) after the command's name, which may hold spaces and
 * parentheses: [0] is the state, [1] the parent's pid, [11] and [12] the user and system CPU
 * ticks. Throws once the process is gone.
 */
export function procStatFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

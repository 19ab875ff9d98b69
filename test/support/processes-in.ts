import { readdirSync, readlinkSync } from 'node:fs';

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

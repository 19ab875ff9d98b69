import { readFileSync } from 'node:fs';

/** A bench child's resident set size in MB, from /proc (Linux). */
export function residentMb(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Math.round(Number(match[1]) / 102.4) / 10 : 0;
}

import { readFileSync } from 'node:fs';

/**
 * The machine's file data not yet on disk (/proc/meminfo's Dirty plus Writeback), in MB, or
 * undefined where there is no /proc. A bench that has just loaded gigabytes reads it to tell
 * whether its measurements ran while the kernel was still writing that load out.
 */
export function dirtyMegabytes(): number | undefined {
  let meminfo: string;
  try {
    meminfo = readFileSync('/proc/meminfo', 'utf8');
  } catch {
    return undefined;
  }
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(meminfo)?.[1] ?? 0);
  return Math.round((kb('Dirty') + kb('Writeback')) / 1024);
}

import { readFileSync } from 'node:fs';

/** Resident set size of a process in bytes, from /proc/<pid>/status (Linux); 0 once it has exited. */
export function residentBytes(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

export interface MemoryFigures {
  startMb: number;
  peakMb: number;
  endMb: number;
}

/**
 * Samples a child process's RSS every `intervalMs` (reading /proc costs microseconds, so the
 * sampling does not load the machine) and keeps the start, the peak and, when `finish` is called,
 * the end. Our children are started with the pinned node binary itself, so the pid is the server's.
 */
export function sampleMemory(pid: number, intervalMs = 250): { finish(): MemoryFigures } {
  const start = residentBytes(pid);
  let peak = start;
  const timer = setInterval(() => {
    peak = Math.max(peak, residentBytes(pid));
  }, intervalMs);
  const mb = (bytes: number) => Math.round((bytes / 1_048_576) * 10) / 10;
  return {
    finish() {
      clearInterval(timer);
      const end = residentBytes(pid);
      peak = Math.max(peak, end);
      return { startMb: mb(start), peakMb: mb(peak), endMb: mb(end) };
    },
  };
}

import { residentBytes } from './process-memory.ts';

export interface RssSeries {
  /** Stops sampling; the samples in MB, one a second. */
  finish(): number[];
}

/** A process's RSS sampled every second (from /proc), kept whole so a test can judge its trend. */
export function sampleRssEverySecond(pid: number): RssSeries {
  const samples: number[] = [];
  const take = () => samples.push(Math.round((residentBytes(pid) / 1_048_576) * 10) / 10);
  take();
  const timer = setInterval(take, 1_000);
  return {
    finish() {
      clearInterval(timer);
      return samples;
    },
  };
}

/**
 * How much a series grew from its first third to its last: the highest sample of the last third
 * minus the highest of the first. A leak of a few MB a second shows as hundreds of MB over three
 * minutes; a bounded process's heap settles in the first third and stays.
 */
export function growthMb(samples: readonly number[]): number {
  const third = Math.max(1, Math.floor(samples.length / 3));
  const first = Math.max(...samples.slice(0, third));
  const last = Math.max(...samples.slice(-third));
  return Math.round((last - first) * 10) / 10;
}

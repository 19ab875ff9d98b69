import { readFileSync } from 'node:fs';

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** A bench child's resident set size in MB, from /proc (Linux). */
export function residentMb(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Math.round(Number(match[1]) / 102.4) / 10 : 0;
}

/** Polls a service's URL until it answers 2xx (bounded). */
export async function waitHealthy(url: string, timeoutMs: number): Promise<void> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if (
      await fetch(url).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await sleep(200);
  }
  throw new Error(`${url} not healthy within ${timeoutMs} ms`);
}

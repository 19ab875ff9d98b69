// What the receiver benches that run the receiver in a child process share (bench-receiver-ab.ts,
// bench-receiver-backlog.ts): starting it through bench-receiver.ts's serve mode, reading its CPU
// time and request count, and loading it at a fixed rate.
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { SignedBenchRequest } from './bench-body.ts';
import { procStatFields } from './proc-stat.ts';
import { trackStarted } from './started-processes.ts';

/** Linux reports process CPU in clock ticks of 10 ms (USER_HZ = 100 on every mainstream build). */
export const tickMicros = 10_000;

/** A process's CPU time so far, in clock ticks, from /proc (Linux). */
export function processTicks(pid: number): { user: number; system: number } {
  const fields = procStatFields(pid);
  return { user: Number(fields[11]), system: Number(fields[12]) };
}

/** The server child's request count (its bench serve mode answers any IPC message with it). */
export function requestCount(child: ChildProcess): Promise<number> {
  return new Promise((resolveCount) => {
    child.once('message', (message) => resolveCount((message as { requests: number }).requests));
    child.send('sample');
  });
}

/**
 * The receiver of checkout `tree`, started with that checkout's own `scripts/bench-receiver.ts
 * serve receiver` (so it is configured by its own code), on `port` over `redisUrl`.
 */
export async function startBenchReceiver(
  tree: string,
  port: number,
  redisUrl: string,
  spoolDir: string,
): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [join(tree, 'scripts/bench-receiver.ts'), 'serve', 'receiver', String(port), redisUrl, spoolDir],
    { cwd: tree, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] },
  );
  trackStarted(child);
  await new Promise<void>((ready, fail) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('listening')) ready();
    });
    child.once('exit', (code) => fail(new Error(`receiver (${tree}) exited (${code})`)));
  });
  return child;
}

/**
 * `seconds` of POSTs to a bench receiver at a fixed overall `rate`, sending `bodies` in order (each
 * once) and then whatever `more` makes.
 */
export function loadAtRate(
  port: number,
  rate: number,
  seconds: number,
  bodies: readonly SignedBenchRequest[],
  more: () => SignedBenchRequest,
): Promise<autocannon.Result> {
  let next = 0;
  return autocannon({
    url: `http://127.0.0.1:${port}/webhooks`,
    connections: 50,
    overallRate: rate,
    // autocannon 8 corrects for coordinated omission with an expected interval of ceil(1 / rate)
    // (rate per connection per second: 1 ms for any rate), so each answer of d ms was counted
    // about d times and the p99 came out several times too high. Each answer is counted once.
    ignoreCoordinatedOmission: true,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        setupRequest: (request) => {
          const item = bodies[next] ?? more();
          next += 1;
          return { ...request, body: item.payload, headers: item.headers };
        },
      },
    ],
  });
}

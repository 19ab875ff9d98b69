// The soak's same-run baseline: the bare calls under the service's own figures, timed on the same
// machine and stores through the whole run. A latency of the service that climbs while these stay
// flat is the service's; one that climbs with them is the machine (a neighbour on a shared host,
// the disk filling its cache) and no trend of the product. Timed in a process of its own: in the
// bench's, busy sending the load and reading the streams, they measured its event loop.
import { fork } from 'node:child_process';
import { Redis } from 'ioredis';
import pg from 'pg';
import { POSTGRES_SESSION_OPTIONS } from '../../tray-service/storage/postgres/connect-postgres.ts';
import { plainPage } from './bench-api-plain.ts';
import { stopChild } from './stop-child.ts';
import { p99Tenths } from './quantile.ts';

export interface SoakBaselineMinute {
  /** p99 of the history page's own statement, sent by node-postgres alone (ms). */
  barePageP99Ms: number;
  /** p99 of a Redis PING, the round trip under every enqueue and stream publish (ms). */
  barePingP99Ms: number;
  /** How many of each were timed in the minute. */
  bareCalls: number;
}

export interface SoakBaseline {
  /** The minute's figures; the samples start again. */
  take(): Promise<SoakBaselineMinute>;
  stop(): Promise<void>;
}

interface SoakBaselineOptions {
  databaseUrl: string;
  redisUrl: string;
  users: readonly string[];
  pageSize: number;
  everyMs?: number;
}

type ToBaseline = { kind: 'start'; options: SoakBaselineOptions } | { kind: 'take' };

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * Forks this file: it times, one after the other every `everyMs`, the page statement of the next
 * of `users` (the API's default page of the inbox view, as the soak's readers ask for it) and a
 * Redis PING. One loop, so the baseline adds little load of its own; a failed call is left out,
 * and a minute with none timed says so (soak-failures.ts).
 */
export function startSoakBaseline(options: SoakBaselineOptions): SoakBaseline {
  const child = fork(import.meta.filename, [], { stdio: 'inherit' });
  process.once('exit', () => child.kill());
  const exited = new Promise<never>((_resolve, reject) =>
    child.once('exit', (code) => reject(new Error(`the soak baseline exited (${code})`))),
  );
  exited.catch(() => undefined);
  // A message to a child already gone (Ctrl-C reaches it too) fails through this, not as an
  // uncaught 'error' of the child that ended the bench before it stopped its servers.
  child.on('error', () => undefined);
  const tell = (message: ToBaseline) => {
    if (child.connected) child.send(message, () => undefined);
  };
  tell({ kind: 'start', options });
  return {
    take: () =>
      Promise.race([
        exited,
        new Promise<SoakBaselineMinute>((resolve) => {
          child.once('message', (minute: SoakBaselineMinute) => resolve(minute));
          tell({ kind: 'take' });
        }),
      ]),
    // It holds nothing to close in order (two connections, the figures taken): a signal ends it.
    stop: () => stopChild(child),
  };
}

/** The child: the loop, answering each `take` with the minute's figures. */
function runBaseline(options: SoakBaselineOptions): void {
  const sql = new pg.Pool({
    connectionString: options.databaseUrl,
    options: POSTGRES_SESSION_OPTIONS,
    max: 1,
  });
  const redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 1 });
  // A call that fails is left out; an error event without a listener would end the process.
  redis.on('error', () => {});
  sql.on('error', () => {});
  let page: number[] = [];
  let ping: number[] = [];
  void (async () => {
    for (let n = 0; ; n += 1) {
      const user = options.users[(n * 7919) % options.users.length] ?? '';
      const { text, values } = plainPage(user, 'inbox', undefined, options.pageSize);
      let began = performance.now();
      await sql.query(text, values).then(
        () => page.push(performance.now() - began),
        () => {},
      );
      began = performance.now();
      await redis.ping().then(
        () => ping.push(performance.now() - began),
        () => {},
      );
      await sleep(options.everyMs ?? 50);
    }
  })();
  process.on('message', (message: ToBaseline) => {
    if (message.kind !== 'take') return;
    const minute: SoakBaselineMinute = {
      barePageP99Ms: p99Tenths(page),
      barePingP99Ms: p99Tenths(ping),
      bareCalls: Math.min(page.length, ping.length),
    };
    page = [];
    ping = [];
    process.send?.(minute);
  });
}

if (process.send && import.meta.filename === process.argv[1]) {
  process.once('message', (message: ToBaseline) => {
    if (message.kind === 'start') runBaseline(message.options);
  });
}

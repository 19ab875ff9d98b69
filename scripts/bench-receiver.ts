// `npm run bench:receiver`: the same load against (a) a bare Express 5 app answering 200 {} and
// (b) the full receiver over a real redis-server, in one run (BENCHMARKS.md, "Receiver").
// Each server runs in its own child process so the load generator (this process) does not share
// its event loop. Every request carries a distinct, freshly signed ~1.5 KB channel.didCreate body,
// so the receiver runs the whole path (allowlist, signature, envelope, dedupe, enqueue) each time
// instead of answering redeliveries from the dedupe check.
// The two are measured alternately, BENCH_ROUNDS times (default 8, of 4 s each), and the summary
// takes the median of the rounds: the host's speed drifts by 2x over minutes here, and a bare run
// and a receiver run minutes apart are not comparable. Many short rounds rather than three of 10 s
// (the earlier default): each ratio then compares two runs seconds apart, and a median of eight moved
// less from run to run than a median of three (BENCHMARKS.md, "Receiver").
// BENCH_SCHEMES=both (the default) configures a Standard Webhooks webhook beside the platform's two
// and sends every other request signed that way (webhook-id, webhook-timestamp, webhook-signature;
// docs/receiver.md#signature-schemes); BENCH_SCHEMES=platform sends only the platform's signature.
// Nothing consumes the queue here, so it grows by every request the receiver accepts; each row
// prints the jobs queued when it started. Whether that depth changes the cost of a delivery is
// measured on its own, at a fixed rate, by `npm run bench:receiver-backlog` (scripts/bench-receiver-backlog.ts).
// BENCH_DURATION (seconds, default 4) and BENCH_CONNECTIONS (default 100) tune the run, and
// BENCH_BODIES_PER_SECOND (default 40,000) how many bodies are signed for each second of a run
// (at most 480,000 in all, and 240 s a run with Standard Webhooks bodies: scripts/lib/bench-body.ts);
// BENCH_CPU_PROF_DIR=<dir> writes a V8 CPU profile of each server there (open in Chrome DevTools).
// BENCH_BASELINE=<other checkout with node_modules> adds that checkout's receiver to every round
// (started by its own serve mode, over the same Redis), for a before/after in one run.
// BENCH_REDIS=durable runs the bench's Redis as `npm start` does (append-only file fsynced before
// each answer, `appendfsync always`); by default it keeps no file, as the earlier runs compared here.
// BENCH_SPLIT=1 adds, in every round, the same receiver with an enqueue that answers at once without
// Redis ("checks"): what the checks cost apart from the store.
// Why the second and third tables: the same code gave 64% and 54% of bare Express in two quiet
// runs an hour apart. Per run they show what the whole machine did (its busy share, the time the
// hypervisor stole, the CPU of processes outside the bench) and the load generator's own CPU, so a
// slow run can be told apart from a slow receiver; and, from Redis's INFO commandstats, how many
// jobs shared one script call and what each command inside it cost.
import { spawn, type ChildProcess } from 'node:child_process';
import type { RequestListener, Server } from 'node:http';
import type { WebhookSettings } from '../receiver/http/create-webhook-handler.ts';
import type { Receiver } from '../receiver/wire-receiver.ts';
import type { Logger } from '../shared/logging/create-logger.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort, startRedis, type LocalServer } from './lib/local-servers.ts';
import { trackStarted } from './lib/started-processes.ts';
import { stopOnSignal } from './lib/stop-on-signal.ts';
import { stopChild } from './lib/stop-child.ts';
import { scriptEnv } from './lib/cli.ts';
import { loadOrExit } from '../shared/config/load-or-exit.ts';
import { positiveInt } from '../shared/config/env-types.ts';
import { hostCpu, hostShares } from './lib/host-cpu.ts';
import {
  benchSchemes,
  benchSecret as secret,
  benchStandardSecret,
  checkSignedAhead,
  signedBenchRequest,
  type SignedBenchRequest as SignedBody,
} from './lib/bench-body.ts';
import type { CommandStats } from './lib/redis-command-stats.ts';
import { benchFailures, failOn, receiverBenchReport, type Figures } from './lib/bench-receiver-report.ts';

// A garbage count (BENCH_ROUNDS=eight) gave NaN, no round at all, empty tables and exit 0.
const settings = loadOrExit(() =>
  scriptEnv({
    BENCH_DURATION: positiveInt(4, 3600),
    BENCH_CONNECTIONS: positiveInt(100, 10_000),
    BENCH_ROUNDS: positiveInt(8, 1000),
    BENCH_BODIES_PER_SECOND: positiveInt(40_000, 1_000_000),
  }),
);
const durationSeconds = settings.BENCH_DURATION;
const connections = settings.BENCH_CONNECTIONS;
const rounds = settings.BENCH_ROUNDS;
const cpuProfDir = process.env.BENCH_CPU_PROF_DIR;
const baseline = process.env.BENCH_BASELINE;
const split = process.env.BENCH_SPLIT === '1';
const durableRedis = process.env.BENCH_REDIS === 'durable';
const schemes = benchSchemes(process.env.BENCH_SCHEMES);
loadOrExit(() =>
  checkSignedAhead(
    {
      seconds: ['BENCH_DURATION', durationSeconds],
      rate: ['BENCH_BODIES_PER_SECOND', settings.BENCH_BODIES_PER_SECOND],
      bodies: durationSeconds * settings.BENCH_BODIES_PER_SECOND,
    },
    schemes,
  ),
);

interface Sample {
  cpuMicros: number;
  requests: number;
  /** The event loop's busy and idle time so far (performance.eventLoopUtilization), in ms. */
  active: number;
  idle: number;
}

async function serve(mode: string, port: number, redisUrl: string, spoolDir: string): Promise<void> {
  const { listen } = await import('../shared/http/listen.ts');
  let server: Server;
  if (mode === 'bare') {
    const { default: express } = await import('express');
    const app = express();
    app.post('/webhooks', (_req, res) => {
      res.status(200).json({});
    });
    server = await listen(app, { port, host: '127.0.0.1' });
  } else {
    const { wireReceiver } = await import('../receiver/wire-receiver.ts');
    const { createMetricsRegistry } = await import('../shared/http/metrics-router.ts');
    const { createLogger } = await import('../shared/logging/create-logger.ts');
    const settings = await receiverSettings();
    const logger = createLogger({ name: 'bench', level: 'warn' });
    const wired = await wireReceiver({
      redis: redisUrl,
      queuePrefix: 'bench',
      spoolDir,
      webhookPath: '/webhooks',
      dedupeSeconds: 86_400,
      enqueueTimeoutMs: 300,
      settings,
      logger,
      registry: createMetricsRegistry('receiver'),
      metrics: { kind: 'open' },
    });
    await new Promise((resolve) =>
      wired.queue.client.status === 'ready' ? resolve(undefined) : wired.queue.client.once('ready', resolve),
    );
    const app = mode === 'checks' ? await withoutStore(wired, settings, logger) : wired.app;
    server = await listen(app, {
      port,
      host: '127.0.0.1',
    });
  }
  // The parent asks for CPU time and request count before and after a measured run, so the cost
  // of one request is known even when other work on the machine makes req/s noisy.
  let requests = 0;
  server.on('request', () => {
    requests += 1;
  });
  const { performance } = await import('node:perf_hooks');
  process.on('message', () => {
    const { user, system } = process.cpuUsage();
    const { active, idle } = performance.eventLoopUtilization();
    process.send?.({ cpuMicros: user + system, requests, active, idle } satisfies Sample);
  });
  // Exit normally on SIGTERM, so `node --cpu-prof` can write its profile.
  process.once('SIGTERM', () => process.exit(0));
  process.stdout.write('listening\n');
}

/**
 * The same receiver app, but its enqueue answers `queued` at once without calling Redis: every
 * check, the metrics and the acknowledgement, none of the store. Beside the full receiver it splits
 * the gap to the bare app between the checks and the enqueue (BENCH_SPLIT=1).
 */
async function withoutStore(
  wired: Receiver,
  settings: WebhookSettings,
  logger: Logger,
): Promise<RequestListener> {
  const { createReceiverApp } = await import('../receiver/create-receiver-app.ts');
  const { createMetricsRegistry } = await import('../shared/http/metrics-router.ts');
  const { createReceiverMetrics } = await import('../receiver/receiver-metrics.ts');
  const { createRedisWriteHealth } = await import('../receiver/store/redis-write-health.ts');
  // Its own registry: the wired receiver's already holds the receiver's metrics by these names.
  const registry = createMetricsRegistry('receiver');
  return createReceiverApp({
    logger,
    redis: createRedisWriteHealth(wired.queue.client, 'bench-receiver').check,
    registry,
    metrics: { kind: 'open' },
    receiverMetrics: createReceiverMetrics(registry, () => wired.spool.depth()),
    spool: wired.spool,
    enqueue: () => Promise.resolve('queued'),
    webhookPath: '/webhooks',
    settings,
  });
}

/** What main.ts would read from the environment for the bench's webhooks. */
async function receiverSettings(): Promise<WebhookSettings> {
  const { parseCidrList } = await import('../shared/address/parse-cidr.ts');
  const { loadReceiverConfig } = await import('../receiver/receiver-config.ts');
  return {
    // The allowlist check runs (and passes) for the loopback load generator.
    allowlist: parseCidrList('52.77.130.167,3.127.106.141,52.70.191.115,127.0.0.1'),
    trustProxy: { kind: 'none' },
    // The webhooks as main.ts reads them; the Standard Webhooks one with BENCH_SCHEMES=both.
    secrets: loadReceiverConfig(
      schemes === 'both'
        ? {
            WEBHOOK_SECRETS: `eu=${secret},us=other-secret,sw=${benchStandardSecret}`,
            WEBHOOK_SIGNATURE_SCHEME: 'sw=standard-webhooks',
          }
        : { WEBHOOK_SECRETS: `eu=${secret},us=other-secret` },
    ).WEBHOOK_SECRETS,
    maxBodyBytes: 1024 * 1024,
  };
}

function startServer(mode: string, port: number, redisUrl: string, spoolDir: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      ...(cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : []),
      import.meta.filename,
      'serve',
      mode,
      String(port),
      redisUrl,
      spoolDir,
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    },
  );
  trackStarted(child);
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('listening')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`${mode} server exited (${code})`)));
  });
}

/**
 * Asks a server child for its CPU time and request count. A child that has died fails the round
 * with its exit, rather than throwing from `send` or waiting for an answer that never comes.
 */
function sample(child: ChildProcess): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const died = (code: number | null) => reject(new Error(`a server exited during the run (${code})`));
    if (child.exitCode !== null || child.signalCode !== null) return died(child.exitCode);
    child.once('exit', died);
    child.once('message', (message) => {
      child.off('exit', died);
      resolve(message as Sample);
    });
    child.send('sample', (error) => {
      if (error) {
        child.off('exit', died);
        reject(error);
      }
    });
  });
}

/** redis-server's own CPU seconds. Imported on first use: this file is also the server children's entry. */
async function redisCpuSeconds(redisUrl: string): Promise<number> {
  const { redisCpuSeconds: read } = await import('./lib/redis-cpu-seconds.ts');
  return read(redisUrl);
}

/** Imported on first use, like redisCpuSeconds. */
async function queuedJobs(redisUrl: string): Promise<number> {
  const { queuedJobs: read } = await import('./lib/queued-jobs.ts');
  return read(redisUrl, 'bench');
}

/** Imported on first use, like redisCpuSeconds. */
async function commandStats(redisUrl: string): Promise<CommandStats> {
  const { redisCommandStats } = await import('./lib/redis-command-stats.ts');
  return redisCommandStats(redisUrl);
}

/**
 * One measured run, with the CPU each server process, Redis and the load generator spent per
 * request, and what the whole machine did meanwhile.
 */
async function measure(
  mode: string,
  port: number,
  child: ChildProcess,
  redisUrl: string,
): Promise<Omit<Figures, 'round'>> {
  const { commandStatsDelta } = await import('./lib/redis-command-stats.ts');
  const pool = prepared(durationSeconds);
  const queued = await queuedJobs(redisUrl);
  const before = await sample(child);
  const redisBefore = await redisCpuSeconds(redisUrl);
  const commandsBefore = await commandStats(redisUrl);
  const hostBefore = hostCpu();
  const generatorBefore = process.cpuUsage();
  const figures = await load(mode, port, durationSeconds, pool);
  const generator = process.cpuUsage(generatorBefore);
  const host = hostShares(hostBefore, hostCpu());
  const after = await sample(child);
  const redisAfter = await redisCpuSeconds(redisUrl);
  const commandsAfter = await commandStats(redisUrl);
  const served = Math.max(after.requests - before.requests, 1);
  const active = after.active - before.active;
  const serverSeconds = (after.cpuMicros - before.cpuMicros) / 1e6;
  const redisSeconds = redisAfter - redisBefore;
  const generatorSeconds = (generator.user + generator.system) / 1e6;
  const capacity = host.totalSeconds;
  return {
    ...figures,
    queued,
    serverCpuMicros: (serverSeconds * 1e6) / served,
    redisCpuMicros: (redisSeconds * 1e6) / served,
    generatorCpuMicros: (generatorSeconds * 1e6) / served,
    serverBusy: active / Math.max(active + after.idle - before.idle, 1),
    machine: {
      busy: host.busy,
      steal: host.steal,
      server: serverSeconds / capacity,
      redis: redisSeconds / capacity,
      generator: generatorSeconds / capacity,
      others: Math.max(0, host.busySeconds - serverSeconds - redisSeconds - generatorSeconds) / capacity,
    },
    commands: commandStatsDelta(commandsBefore, commandsAfter),
  };
}

/** Never reset, so no body repeats across warm-up and runs (a repeat would be a dedupe drop). */
let n = 0;

/** The next body, signed the platform's way or, every other one with BENCH_SCHEMES=both, Standard Webhooks'. */
const signed = (): SignedBody => signedBenchRequest((n += 1), schemes);

/**
 * Enough bodies for a receiver's measured run at a rate above what it reaches here, serialised and
 * signed before the clock starts. Signing during the run made the load generator, which shares the
 * machine's two cores with the servers, the bottleneck of the run and added its own delays to the
 * latencies it measured. The warm-up signs as it goes: it is not measured. The bare app, which keeps
 * nothing, goes round its bodies again when it runs out (on a fast host it has served 45,000 req/s,
 * beyond any pool that fits in memory; until 29 Nov it signed the rest as it went, which slowed it
 * and flattered the receiver's ratio).
 */
const bodiesPerSecond = settings.BENCH_BODIES_PER_SECOND;

/** What autocannon measured of one run. */
type LoadFigures = Pick<
  Figures,
  'mode' | 'requestsPerSecond' | 'p50' | 'p99' | 'non2xx' | 'errors' | 'total' | 'generatorBusy'
>;

/** The bodies of one measured run; signed outside the measured window. */
const prepared = (seconds: number): (SignedBody | undefined)[] =>
  Array.from({ length: seconds * bodiesPerSecond }, signed);

/** `seconds` of load at full speed; a measured run sends `pool` (prepared), a warm-up signs as it goes. */
async function load(
  mode: string,
  port: number,
  seconds: number,
  pool: (SignedBody | undefined)[] = [],
): Promise<LoadFigures> {
  const measured = pool.length > 0;
  // A receiver would drop a repeated body as a redelivery, so it only gets new ones; the bare app
  // answers every body alike, so its run may send one again.
  const reuse = mode === 'bare' && measured;
  // Imported here, not at the top: the server child processes should not load it.
  const { default: autocannon } = await import('autocannon');
  const { performance } = await import('node:perf_hooks');
  let next = 0;
  let signedDuringRun = 0;
  const started = performance.eventLoopUtilization();
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/webhooks`,
    connections,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        setupRequest: (request) => {
          let item = reuse ? pool[next % pool.length] : pool[next];
          if (item === undefined) {
            item = signed();
            signedDuringRun += 1;
          } else if (!reuse) {
            pool[next] = undefined; // sent once; let it be collected
          }
          next += 1;
          return {
            ...request,
            body: item.payload,
            headers: item.headers,
          };
        },
      },
    ],
  });
  const generatorBusy = performance.eventLoopUtilization(started).utilization;
  if (measured && signedDuringRun > 0) {
    process.stdout.write(
      `[bench] ${mode}: ran out of prepared bodies; ${signedDuringRun} signed during the run\n`,
    );
  }
  return {
    mode,
    // Answers 2xx a second: a refusal, answered at once, is no throughput (failures are below).
    requestsPerSecond: result['2xx'] / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    total: result.requests.total,
    generatorBusy,
  };
}

async function spoolDepth(port: number): Promise<string> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => /^webhook_(accepted_total|spool_depth|dropped_total)/.test(line))
    .join('\n');
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-receiver-'));
  const servers: { mode: string; port: number; child: ChildProcess }[] = [];
  let started: LocalServer | undefined;
  const stop = stopOnSignal(async () => {
    await Promise.all(servers.map(({ child }) => stopChild(child)));
    await started?.stop();
  }, dir);
  const results: Figures[] = [];
  try {
    const redis = await startRedis({ dir: join(dir, 'redis'), persistent: durableRedis });
    started = redis;
    for (const mode of [
      'bare',
      ...(baseline ? ['baseline'] : []),
      ...(split ? ['checks'] : []),
      'receiver',
    ]) {
      const port = await freePort();
      const spool = join(dir, `spool-${mode}`);
      const child =
        mode === 'baseline' && baseline
          ? await startBaseline(baseline, port, redis.url, spool)
          : await startServer(mode, port, redis.url, spool);
      servers.push({ mode, port, child });
    }
    process.stdout.write(
      `[bench] ${rounds} rounds of ${durationSeconds} s per server at ${connections} connections, after a 2 s warm-up each; signature schemes: ${schemes}; Redis: ${durableRedis ? 'durable (appendfsync always)' : 'no append-only file'}${baseline ? `; baseline: ${baseline}` : ''}\n`,
    );
    for (const { mode, port } of servers) await load(mode, port, 2);
    for (let round = 1; round <= rounds; round += 1) {
      for (const { mode, port, child } of servers) {
        results.push({ ...(await measure(mode, port, child, redis.url)), round });
        process.stdout.write(`[bench] round ${round}: ${mode} done\n`);
      }
    }
    const receiver = servers.find((server) => server.mode === 'receiver');
    if (receiver) process.stdout.write(`${await spoolDepth(receiver.port)}\n`);
  } finally {
    await stop();
  }
  process.stdout.write(receiverBenchReport(results));
  failOn(benchFailures(results));
}

/** Another checkout's receiver, started by its own serve mode (so configured by its own code). */
async function startBaseline(tree: string, port: number, redisUrl: string, spoolDir: string) {
  const { startBenchReceiver } = await import('./lib/bench-receiver-child.ts');
  return startBenchReceiver(resolve(tree), port, redisUrl, spoolDir);
}

if (process.argv[2] === 'serve') {
  const [, , , mode = 'bare', port = '0', redisUrl = '', spoolDir = ''] = process.argv;
  await serve(mode, Number(port), redisUrl, spoolDir);
} else {
  await main();
}

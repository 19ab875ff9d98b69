// `npm run bench:receiver-ab -- <other checkout>`: the receiver's CPU cost per request in two
// versions of the code, measured at the same time (BENCHMARKS.md, "Receiver").
//
// Why: this host's speed drifts by up to 2x within minutes, so two runs of bench:receiver minutes
// apart cannot tell a 10% change from the drift. Here both receivers (A: the other checkout, B:
// this one) run side by side, each with its own redis-server, under the same fixed request rate,
// and each round compares the CPU both spent per request in the same seconds. The rate is kept
// below what either can serve, so both do the same work and the ratio is of cost, not of speed.
//
// The other checkout needs its own node_modules, e.g.
//   git worktree add /tmp/base <rev> && cp -al node_modules /tmp/base/
// It is started with its own `scripts/bench-receiver.ts serve receiver ...`, so both sides are
// configured by their own code. AB_RATE (requests/s per receiver, default 1500), AB_SECONDS
// (default 15) and AB_ROUNDS (default 4) tune the run. BENCH_SCHEMES as in bench-receiver.ts: `both`
// (the default) sends every other request signed the Standard Webhooks way to both sides, whose
// serve mode configures that webhook too; `platform` sends only the platform's signature.
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import {
  loadAtRate,
  processTicks,
  requestCount,
  startBenchReceiver,
  tickMicros,
} from './lib/bench-receiver-child.ts';
import {
  benchSchemes,
  checkSignedAhead,
  signedBenchRequest,
  type SignedBenchRequest,
} from './lib/bench-body.ts';
import { freePort, startRedis, type LocalServer } from './lib/local-servers.ts';
import { stopOnSignal } from './lib/stop-on-signal.ts';
import { stopChild } from './lib/stop-child.ts';
import { scriptEnv } from './lib/cli.ts';
import { loadOrExit } from '../shared/config/load-or-exit.ts';
import { positiveInt } from '../shared/config/env-types.ts';
import { median } from './lib/quantile.ts';
import { redisCpuSeconds } from './lib/redis-cpu-seconds.ts';
import { failOn } from './lib/bench-receiver-report.ts';

const settings = loadOrExit(() =>
  scriptEnv({
    AB_RATE: positiveInt(1500, 100_000),
    AB_SECONDS: positiveInt(15, 3600),
    AB_ROUNDS: positiveInt(4, 1000),
  }),
);
const rate = settings.AB_RATE;
const seconds = settings.AB_SECONDS;
const rounds = settings.AB_ROUNDS;
const schemes = benchSchemes(process.env.BENCH_SCHEMES);
// Both sides' bodies are signed before each round.
loadOrExit(() =>
  checkSignedAhead(
    {
      seconds: ['AB_SECONDS', seconds],
      rate: ['AB_RATE', rate],
      bodies: 2 * Math.ceil(rate * seconds * 1.05),
    },
    schemes,
  ),
);

interface Side {
  name: 'A' | 'B';
  tree: string;
  child: ChildProcess;
  port: number;
  redis: LocalServer;
}

interface Usage {
  requests: number;
  /** Clock ticks of the server process (user, system) and redis-server's CPU seconds. */
  userTicks: number;
  systemTicks: number;
  redisSeconds: number;
}

async function usage(side: Side): Promise<Usage> {
  const { user, system } = processTicks(side.child.pid ?? 0);
  return {
    requests: await requestCount(side.child),
    userTicks: user,
    systemTicks: system,
    redisSeconds: await redisCpuSeconds(side.redis.url),
  };
}

async function startSide(name: Side['name'], tree: string, dir: string): Promise<Side> {
  const redis = await startRedis({ dir: mkdtempSync(join(dir, `redis-${name}-`)) });
  try {
    const port = await freePort();
    const child = await startBenchReceiver(tree, port, redis.url, mkdtempSync(join(dir, `spool-${name}-`)));
    return { name, tree, child, port, redis };
  } catch (error) {
    // A receiver that did not start (the other checkout without node_modules) leaves no Redis.
    await redis.stop();
    throw error;
  }
}

let sent = 0;

/** Distinct signed bodies, made before the clock starts so signing does not slow the generator. */
function signedBodies(count: number): SignedBenchRequest[] {
  return Array.from({ length: count }, () => signedBenchRequest((sent += 1), schemes));
}

const load = (side: Side, durationSeconds: number, bodies: SignedBenchRequest[]) =>
  loadAtRate(side.port, rate, durationSeconds, bodies, () => signedBenchRequest((sent += 1), schemes));

async function main(): Promise<void> {
  const other = process.argv[2];
  if (!other || !existsSync(join(resolve(other), 'scripts/bench-receiver.ts'))) {
    throw new Error('usage: npm run bench:receiver-ab -- <other checkout with node_modules>');
  }
  const here = resolve(dirname(import.meta.filename), '..');
  const dir = mkdtempSync(join(tmpdir(), 'bench-receiver-ab-'));
  const sides: Side[] = [];
  const ratios: number[] = [];
  const stop = stopOnSignal(async () => {
    for (const side of sides) {
      await stopChild(side.child);
      await side.redis.stop();
    }
  }, dir);
  try {
    sides.push(await startSide('A', resolve(other), dir));
    sides.push(await startSide('B', here, dir));
    process.stdout.write(
      `[ab] A = ${resolve(other)}, B = ${here}; ${rate} req/s each, ${rounds} rounds of ${seconds} s; signature schemes: ${schemes}\n`,
    );
    await Promise.all(sides.map((side) => load(side, 3, signedBodies(rate * 3))));
    const rows: string[] = [];
    let failed = 0;
    for (let round = 1; round <= rounds; round += 1) {
      const bodies = sides.map(() => signedBodies(Math.ceil(rate * seconds * 1.05)));
      const before = await Promise.all(sides.map(usage));
      const results = await Promise.all(sides.map((side, k) => load(side, seconds, bodies[k] ?? [])));
      const after = await Promise.all(sides.map(usage));
      const perRequest = sides.map((side, k) => {
        const b = before[k] as Usage;
        const a = after[k] as Usage;
        const served = Math.max(a.requests - b.requests, 1);
        const user = ((a.userTicks - b.userTicks) * tickMicros) / served;
        const system = ((a.systemTicks - b.systemTicks) * tickMicros) / served;
        const redis = ((a.redisSeconds - b.redisSeconds) * 1e6) / served;
        const result = results[k];
        failed += (result?.non2xx ?? 0) + (result?.errors ?? 0);
        rows.push(
          `| ${round} | ${side.name} | ${served} | ${result?.latency.p99 ?? '-'} | ${(result?.non2xx ?? 0) + (result?.errors ?? 0)} | ${user.toFixed(0)} | ${system.toFixed(0)} | ${redis.toFixed(0)} | ${(user + system + redis).toFixed(0)} |`,
        );
        return user + system + redis;
      });
      ratios.push((perRequest[1] ?? 0) / (perRequest[0] ?? 1));
      process.stdout.write(`[ab] round ${round}: B/A ${ratios.at(-1)?.toFixed(3)}\n`);
    }
    process.stdout.write(
      `\n| round | side | requests | p99 ms | failed | server user us/req | server system us/req | redis us/req | total us/req |\n` +
        `| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n${rows.join('\n')}\n` +
        `CPU per request (server + redis-server), B/A: median ${median(ratios).toFixed(3)} (rounds ${ratios.map((r) => r.toFixed(3)).join(', ')})\n`,
    );
    failOn(failed > 0 ? [`${failed} requests were not answered 2xx`] : []);
  } finally {
    await stop();
  }
}

await main();

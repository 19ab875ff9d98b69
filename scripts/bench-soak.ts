// `npm run bench:soak`: the whole service for a long time at a steady rate, looking for what only
// time shows (a leak, a queue that slowly falls behind, latency creeping up). Mixed events at
// --rate a second through a receiver and two tray processes (API and worker each), --streams open
// live streams spread over both, and --readers API clients reading tray pages in a loop. Prints per
// minute each process's RSS, V8 heap in use and event-loop delay p99 (its own /metrics), the acknowledgement p99,
// the API p99 and the stream lag p99 (acknowledgement to `record` event). Exits 1 on a trend: see
// `trendRule` below. Starts its own redis-server and PostgreSQL (unless REDIS_URL / DATABASE_URL
// point elsewhere). Not part of CI: the default run lasts 30 minutes.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sendSignedWebhook } from './lib/send-signed-webhook.ts';
import { UsageError } from '../shared/errors/usage-error.ts';
import { benchBody } from './lib/bench-body.ts';
import { residentMb } from './lib/bench-process.ts';
import { waitHealthy } from './lib/wait-healthy.ts';
import { commentBody } from './lib/comment-body.ts';
import { soakFailures, type SoakMinute } from './lib/soak-failures.ts';
import { openStream, type Stream } from './lib/sse-client.ts';
import { parseCli, runCli } from './lib/cli.ts';
import { startBenchStores } from './lib/start-bench-stores.ts';
import { hs256Token } from './lib/hs256-token.ts';
import { freePort } from './lib/local-servers.ts';
import { median, p99Tenths } from './lib/quantile.ts';
import { startSoakBaseline, type SoakBaseline } from './lib/soak-baseline.ts';
import { stopOnSignal, type Stoppable } from './lib/stop-on-signal.ts';
import { stopChild } from './lib/stop-child.ts';

const usage = `Usage: npm run bench:soak -- [--minutes 30] [--rate 500] [--streams 1000] [--readers 20] [--window 10]

  --minutes  how long to run, in minutes (default 30)
  --rate     webhooks per second sent to the receiver, half comments to stream users, half
             channel events (default 500)
  --streams  live streams held open, one per user, over both tray processes (default 1000)
  --readers  API clients each reading a history page in a loop (default 20)
  --window   the trend rule's minutes: the last N whole minutes (default 10, at most --minutes - 1)`;

const root = resolve(import.meta.dirname, '..');
const SECRET = 'bench-soak-secret-of-at-least-32-chars';
const WEBHOOK_SECRET = 'bench-secret';
const METRICS_TOKEN = 'bench-soak-metrics-token-32-characters';
/** The tray's page size, which the baseline's bare page statement asks for too. */
const PAGE_SIZE = 10;
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/**
 * The trend rule: over the last `window` minutes, a least-squares line through each series must
 * not climb by more than its allowance across the window (slope x window). RSS may climb 5 % of its
 * first value in the window plus 20 MB; a latency (ack, API, stream lag, event-loop delay) may climb
 * 50 % of its median plus 5 ms. A process that settles passes, one that grows minute over minute
 * fails, and one noisy minute on a shared machine moves a fitted line little.
 */
function trendRule(series: readonly number[], kind: 'rss' | 'latency'): { rise: number; allowed: number } {
  const n = series.length;
  const xs = series.map((_, i) => i);
  const meanX = xs.reduce((a, b) => a + b, 0) / n;
  const meanY = series.reduce((a, b) => a + b, 0) / n;
  const covariance = xs.reduce((sum, x, i) => sum + (x - meanX) * ((series[i] ?? 0) - meanY), 0);
  const variance = xs.reduce((sum, x) => sum + (x - meanX) ** 2, 0);
  const rise = variance === 0 ? 0 : (covariance / variance) * (n - 1);
  const allowed = kind === 'rss' ? (series[0] ?? 0) * 0.05 + 20 : median(series) * 0.5 + 5;
  return { rise: Math.round(rise * 10) / 10, allowed: Math.round(allowed * 10) / 10 };
}

/** A process's own metrics text (prom-client's default metrics on /metrics); '' when it does not answer. */
async function metricsText(port: number): Promise<string> {
  return fetch(`http://127.0.0.1:${port}/metrics`, {
    headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
    // A process whose event loop hangs answers nothing: its minute shows no figures, and the next
    // report is not kept waiting for minutes.
    signal: AbortSignal.timeout(10_000),
  }).then(
    (res) => res.text(),
    () => '',
  );
}

/** One gauge's value from a metrics text, times `scale`, one decimal (NaN when absent). */
function gauge(text: string, name: string, scale: number): number {
  // Default labels (the service's name) may follow the metric's name.
  const value = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1];
  return value === undefined ? NaN : Math.round(Number(value) * scale * 10) / 10;
}

runCli(async () => {
  const { values } = parseCli(
    {
      args: process.argv.slice(2),
      options: {
        minutes: { type: 'string', default: '30' },
        rate: { type: 'string', default: '500' },
        streams: { type: 'string', default: '1000' },
        readers: { type: 'string', default: '20' },
        window: { type: 'string', default: '10' },
      },
    },
    usage,
  );
  const numbers = {
    minutes: Number(values.minutes),
    rate: Number(values.rate),
    streams: Number(values.streams),
    readers: Number(values.readers),
    window: Number(values.window),
  };
  for (const [name, value] of Object.entries(numbers)) {
    if (!Number.isInteger(value) || value < 1) throw new UsageError(`--${name} expects a whole number >= 1`);
  }
  if (numbers.minutes < 3) throw new UsageError('--minutes expects at least 3 (the first minute is warm-up)');
  const window = Math.min(numbers.window, numbers.minutes - 1);

  const dir = mkdtempSync(join(tmpdir(), 'bench-soak-'));
  const servers: Stoppable[] = [];
  const children: ChildProcess[] = [];
  const streams: Stream[] = [];
  let baseline: SoakBaseline | undefined;
  // The services before the servers they use, each waited for.
  const stopAll = stopOnSignal(async () => {
    for (const stream of streams) stream.close();
    await baseline?.stop();
    await Promise.all(children.map((child) => stopChild(child)));
    for (const server of servers) await server.stop();
  }, dir);
  try {
    const { redisUrl, databaseUrl, redisPrefixes } = await startBenchStores(dir, 'bench_soak', servers);
    const trayPorts = [await freePort(), await freePort()];
    const receiverPort = await freePort();
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      LOG_LEVEL: 'warn',
      REDIS_URL: redisUrl,
      ...redisPrefixes,
      DATABASE_URL: databaseUrl,
      JWT_SECRET: SECRET,
      METRICS_TOKEN,
      RATE_LIMIT_CALLS: '1000000',
      TRAY_PAGE_SIZE: String(PAGE_SIZE),
      STREAMS_PER_USER: '5',
      WEBHOOK_ALLOWLIST: 'off',
      WEBHOOK_SECRETS: `bench=${WEBHOOK_SECRET}`,
      SPOOL_DIR: join(dir, 'spool'),
      RECEIVER_PORT: String(receiverPort),
    };
    const start = (script: string, extra: NodeJS.ProcessEnv) => {
      const child = spawn(process.execPath, [join(root, script)], {
        env: { ...env, ...extra },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      children.push(child);
      return child;
    };
    const receiver = start('receiver/main.ts', {});
    const trays = trayPorts.map((port, n) =>
      start('tray-service/main.ts', { TRAY_PORT: String(port), ADMIN_PORT: String(port + 1000 + n) }),
    );
    const ports = [receiverPort, ...trayPorts];
    process.stderr.write('[bench:soak] waiting for the receiver and the tray processes to be healthy\n');
    await Promise.all(ports.map((port) => waitHealthy(`http://127.0.0.1:${port}/healthz`, 120_000)));

    // Streams: one per user, alternating between the tray processes.
    const users = Array.from({ length: numbers.streams }, (_, i) => `u-s${i}`);
    const acked = new Map<string, number>();
    // A record that arrives before its ack was read (the worker was quicker than the response): a
    // lag of 0 once the ack comes. Dropped, it took the fastest deliveries out of the lag figures.
    const early = new Set<string>();
    let lags: number[] = [];
    // Minted once: signing a token per call would load the bench's own process, not the service.
    // Valid an hour past the run (a fixed 2 h failed every run over about 118 minutes with 401s).
    const lifetime = `${numbers.minutes + 60}m`;
    const tokens = await Promise.all(users.map((user) => hs256Token(SECRET, user, lifetime)));
    for (const [i, token] of tokens.entries()) {
      if (i % 1_000 === 0) process.stderr.write(`[bench:soak] opening streams: ${i}/${tokens.length}\n`);
      streams.push(
        await openStream(
          `http://127.0.0.1:${trayPorts[i % 2]}/notifications/v3/stream`,
          token,
          (event, data) => {
            if (event !== 'record') return;
            const postId = (JSON.parse(data) as { targetId: string }).targetId;
            const at = acked.get(postId);
            if (at === undefined) {
              early.add(postId);
              return;
            }
            acked.delete(postId);
            lags.push(performance.now() - at);
          },
        ),
      );
    }

    // Readers: each reads a stream user's history page in a loop.
    let stopped = false;
    let apiTimes: number[] = [];
    let apiFailed = 0;
    const readers = Array.from({ length: numbers.readers }, async (_, r) => {
      for (let n = 0; !stopped; n += 1) {
        const token = tokens[(r * 7919 + n) % users.length] ?? '';
        const began = performance.now();
        // A failed read, answered at once, would pull the p99 down: it is counted apart.
        await fetch(`http://127.0.0.1:${trayPorts[n % 2]}/notifications/v3/history`, {
          headers: { Authorization: `Bearer ${token}` },
        }).then(
          async (res) => {
            await res.arrayBuffer();
            if (res.ok) apiTimes.push(performance.now() - began);
            else apiFailed += 1;
          },
          () => {
            apiFailed += 1;
          },
        );
        await sleep(50);
      }
    });

    const bare = startSoakBaseline({ databaseUrl, redisUrl, users, pageSize: PAGE_SIZE });
    baseline = bare;

    // Load: --rate a second, half comments to stream users (timed to their streams), half channels.
    let ackTimes: number[] = [];
    let sent = 0;
    let non200 = 0;
    const began = performance.now();
    const totalMs = numbers.minutes * 60_000;
    const minutes: SoakMinute[] = [];
    // Beside the load, not in its way: the minute's counts are taken and reset at once (takeCounts),
    // then the processes' metrics are read while sends go on (report): awaited in the send loop, a
    // report held the sends due meanwhile and let them go in one burst, which each minute's ack p99
    // then met. Reports run one after another, so rows stay in minute order.
    const takeCounts = () => {
      const counts = {
        sent,
        non200,
        rssMb: [receiver, ...trays].map((child) => residentMb(child.pid ?? 0)),
        ackP99Ms: p99Tenths(ackTimes),
        apiP99Ms: p99Tenths(apiTimes),
        apiCalls: apiTimes.length,
        apiFailed,
        lagP99Ms: p99Tenths(lags),
        lagCount: lags.length,
      };
      ackTimes = [];
      apiTimes = [];
      apiFailed = 0;
      lags = [];
      sent = 0;
      non200 = 0;
      // Acknowledgements whose record never came within a minute: lost to the streams, counted (the
      // run fails on them) and dropped from the map, so the bench's own memory does not grow.
      const old = performance.now() - 60_000;
      let neverArrived = 0;
      for (const [id, at] of acked)
        if (at < old) {
          acked.delete(id);
          neverArrived += 1;
        }
      return { ...counts, neverArrived };
    };
    const report = async (minute: number, counts: ReturnType<typeof takeCounts>) => {
      const texts = await Promise.all(ports.map(metricsText));
      const row: SoakMinute = {
        minute,
        ...counts,
        heapMb: texts.map((text) => gauge(text, 'nodejs_heap_size_used_bytes', 1 / 1_048_576)),
        loopP99Ms: texts.map((text) => gauge(text, 'nodejs_eventloop_lag_p99_seconds', 1_000)),
        ...(await bare.take()),
      };
      minutes.push(row);
      process.stdout.write(`${JSON.stringify(row)}\n`);
    };
    let reporting = Promise.resolve();
    let reportFailed: { error: unknown } | undefined;
    process.stdout.write(
      `soak: ${numbers.minutes} min at ${numbers.rate}/s, ${numbers.streams} streams, ${numbers.readers} readers; ` +
        `rss, heap used and loop delay per process: [receiver, tray 1, tray 2]; baseline (bare): the ` +
        `history page's statement through node-postgres and a Redis PING, from a process of their own\n`,
    );
    const sends = new Set<Promise<void>>();
    for (let i = 0, minute = 1; ; i += 1) {
      const due = began + (i * 1000) / numbers.rate;
      if (due - began >= totalMs) break;
      // A report that failed (a process gone) ends the run at once, not after the load.
      if (reportFailed) throw reportFailed.error;
      if (due - began >= minute * 60_000) {
        const counts = takeCounts();
        const reported = minute;
        reporting = reporting.then(() => report(reported, counts));
        reporting.catch((error: unknown) => {
          reportFailed ??= { error };
        });
        minute += 1;
      }
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const postId = `p-${i}`;
      const body =
        i % 2 === 0 ? commentBody(users[(i / 2) % users.length] ?? 'u-s0', postId, Date.now()) : benchBody(i);
      const started = performance.now();
      const send = sendSignedWebhook(`http://127.0.0.1:${receiverPort}/webhooks`, body, WEBHOOK_SECRET).then(
        async (res) => {
          await res.arrayBuffer();
          const now = performance.now();
          // A refusal is no acknowledgement: its time stays out of the ack p99.
          if (res.status !== 200) non200 += 1;
          else {
            ackTimes.push(now - started);
            if (i % 2 === 0) {
              if (early.delete(postId)) lags.push(0);
              else acked.set(postId, now);
            }
          }
        },
        () => {
          non200 += 1;
        },
      );
      sent += 1;
      sends.add(send);
      void send.finally(() => sends.delete(send));
    }
    await Promise.all(sends);
    await reporting;
    await report(numbers.minutes, takeCounts());
    stopped = true;
    await Promise.all(readers);

    // The trend rule over the last `window` minutes (the first minute is warm-up and never counted).
    const last = minutes.slice(1).slice(-window);
    const verdicts: { series: string; rise: number; allowed: number; judged: boolean }[] = [];
    // The baseline's trends are shown, never judged: they tell a service's rise from the machine's.
    const judge = (series: string, points: number[], kind: 'rss' | 'latency', judged = true) => {
      const clean = points.filter((p) => Number.isFinite(p));
      if (clean.length >= 2) verdicts.push({ series, judged, ...trendRule(clean, kind) });
    };
    ['receiver', 'tray 1', 'tray 2'].forEach((name, p) => {
      judge(
        `${name} RSS (MB)`,
        last.map((m) => m.rssMb[p] ?? NaN),
        'rss',
      );
      judge(
        `${name} heap used (MB)`,
        last.map((m) => m.heapMb[p] ?? NaN),
        'rss',
      );
      judge(
        `${name} event-loop p99 (ms)`,
        last.map((m) => m.loopP99Ms[p] ?? NaN),
        'latency',
      );
    });
    judge(
      'ack p99 (ms)',
      last.map((m) => m.ackP99Ms),
      'latency',
    );
    judge(
      'API p99 (ms)',
      last.map((m) => m.apiP99Ms),
      'latency',
    );
    judge(
      'stream lag p99 (ms)',
      last.map((m) => m.lagP99Ms),
      'latency',
    );
    judge(
      'baseline: bare page statement p99 (ms)',
      last.map((m) => m.barePageP99Ms),
      'latency',
      false,
    );
    judge(
      'baseline: bare Redis PING p99 (ms)',
      last.map((m) => m.barePingP99Ms),
      'latency',
      false,
    );
    const rising = verdicts.filter((v) => v.judged && v.rise > v.allowed);
    process.stdout.write(
      `trend over the last ${last.length} minutes (fitted rise across the window / allowed):\n`,
    );
    for (const v of verdicts) {
      const mark = !v.judged ? '      ' : v.rise > v.allowed ? 'RISING' : 'ok    ';
      process.stdout.write(`  ${mark} ${v.series}: ${v.rise} / ${v.allowed}\n`);
    }
    process.stdout.write(
      rising.length === 0 ? 'no upward trend\n' : `${rising.length} series trend upward\n`,
    );
    // A run whose deliveries or reads failed, or whose streams received nothing, measured less
    // than it says: its figures may look good for that very reason.
    const failures = soakFailures(minutes.slice(1));
    for (const failure of failures) process.stdout.write(`FAILED ${failure}\n`);
    return rising.length === 0 && failures.length === 0 ? 0 : 1;
  } finally {
    await stopAll();
  }
});

// `npm run bench:receiver-backlog`: does a backlog in the queue make each delivery dearer? The
// receiver's and redis-server's CPU per request at a fixed request rate, on an empty Redis and on
// one already holding BACKLOG_JOBS unconsumed jobs, alternately (BENCHMARKS.md, "Receiver").
//
// Why: a receiver in production keeps accepting while its consumers are down, so its queue can hold
// hundreds of thousands of jobs; and `bench:receiver` leaves every job it queues in Redis (nothing
// consumes them there), its queue growing by 100,000 or more a round. This bench measures that cost
// on its own. Before every round Redis is emptied (FLUSHALL); a backlog round first writes the
// backlog through the receiver's own enqueue script (jobs of the bench's ~1.5 KB event, each with
// its dedupe mark), and an empty round writes the same backlog before emptying Redis, so only the
// depth differs between the two kinds of round. The rate is kept
// below what the receiver serves here, so both kinds of round do the same work and their ratio is
// of cost, not of speed (CPU time is read from /proc for the receiver and from INFO for Redis).
// BACKLOG_JOBS (default 300000), BACKLOG_RATE (requests/s, default 1500), BACKLOG_SECONDS (default
// 15) and BACKLOG_ROUNDS (pairs of rounds, default 3) tune it; BENCH_SCHEMES as in bench-receiver.ts.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { dirname, join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { dedupeKey } from '../receiver/dedupe-key.ts';
import { createReceiverQueue, type ReceiverQueue } from '../receiver/store/create-receiver-queue.ts';
import { enqueueMany } from '../receiver/store/enqueue-once.ts';
import { encodeWebhookJob } from '../shared/queue/webhook-queue.ts';
import { benchBody, benchSchemes, checkSignedAhead, signedBenchRequest } from './lib/bench-body.ts';
import {
  loadAtRate,
  processTicks,
  requestCount,
  startBenchReceiver,
  tickMicros,
} from './lib/bench-receiver-child.ts';
import { freePort, startRedis, type LocalServer } from './lib/local-servers.ts';
import { orStop, stopOnSignal } from './lib/stop-on-signal.ts';
import { stopChild } from './lib/stop-child.ts';
import { scriptEnv } from './lib/cli.ts';
import { loadOrExit } from '../shared/config/load-or-exit.ts';
import { positiveInt } from '../shared/config/env-types.ts';
import { queuedJobs } from './lib/queued-jobs.ts';
import { parseCommandStats } from './lib/redis-command-stats.ts';
import { median } from './lib/quantile.ts';
import { redisCpuSeconds } from './lib/redis-cpu-seconds.ts';
import { failOn } from './lib/bench-receiver-report.ts';

const settings = loadOrExit(() =>
  scriptEnv({
    BACKLOG_JOBS: positiveInt(300_000, 100_000_000),
    BACKLOG_RATE: positiveInt(1500, 100_000),
    BACKLOG_SECONDS: positiveInt(15, 3600),
    BACKLOG_ROUNDS: positiveInt(3, 1000),
  }),
);
const backlogJobs = settings.BACKLOG_JOBS;
const rate = settings.BACKLOG_RATE;
const seconds = settings.BACKLOG_SECONDS;
const rounds = settings.BACKLOG_ROUNDS;
const schemes = benchSchemes(process.env.BENCH_SCHEMES);
loadOrExit(() =>
  checkSignedAhead(
    {
      seconds: ['BACKLOG_SECONDS', seconds],
      rate: ['BACKLOG_RATE', rate],
      bodies: Math.ceil(rate * seconds * 1.05),
    },
    schemes,
  ),
);
/** The queue prefix bench-receiver.ts's serve mode uses. */
const prefix = 'bench';

let sent = 0;
const nextRequest = () => signedBenchRequest((sent += 1), schemes);

interface Row {
  round: number;
  depth: number;
  served: number;
  p99: number;
  failed: number;
  receiverMicros: number;
  redisMicros: number;
  jobsPerCall: number;
}

const loadAverage = async () =>
  (await import('node:os'))
    .loadavg()
    .map((v) => v.toFixed(2))
    .join(' ');

async function main(): Promise<void> {
  const here = resolve(dirname(import.meta.filename), '..');
  const dir = mkdtempSync(join(tmpdir(), 'bench-receiver-backlog-'));
  // Before anything starts: a signal during the start-up stops what was started so far.
  const held: { redis?: LocalServer; admin?: Redis; writer?: ReceiverQueue; child?: ChildProcess } = {};
  const stop = stopOnSignal(async () => {
    if (held.child) await stopChild(held.child);
    await held.writer?.close();
    held.admin?.disconnect();
    await held.redis?.stop();
  }, dir);
  const redis = await orStop(startRedis({ dir: join(dir, 'redis') }), stop);
  const admin = new Redis(redis.url);
  const writer = createReceiverQueue(redis.url, prefix);
  Object.assign(held, { redis, admin, writer });
  const port = await orStop(freePort(), stop);
  const child = await orStop(startBenchReceiver(here, port, redis.url, join(dir, 'spool')), stop);
  held.child = child;
  const pid = child.pid ?? 0;
  const target = { queue: writer.queue, redis: writer.client, markPrefix: prefix, dedupeSeconds: 86_400 };

  /** Writes `count` jobs as the receiver does, 50 to a script call, 8 calls in flight. */
  async function fillBacklog(count: number): Promise<void> {
    let left = count;
    let n = 0;
    const receivedAt = new Date().toISOString();
    const writeSome = async () => {
      while (left > 0) {
        const size = Math.min(50, left);
        left -= size;
        const jobs = Array.from({ length: size }, () => {
          const body = benchBody(-(n += 1));
          const { data } = JSON.parse(body) as { data: Record<string, unknown> };
          const key = dedupeKey(Buffer.from(body));
          return encodeWebhookJob({
            dedupeKey: key,
            webhook: 'eu',
            receivedAt,
            event: 'channel.didCreate',
            data,
          });
        });
        await enqueueMany(target, jobs);
      }
    };
    process.stdout.write(`[backlog] writing ${count} jobs to Redis\n`);
    const started = performance.now();
    // 300,000 jobs take a minute or more: said every 10 s meanwhile.
    const ticking = setInterval(
      () => process.stdout.write(`[backlog] ${count - Math.max(0, left)} of ${count} jobs sent to Redis\n`),
      10_000,
    );
    try {
      await Promise.all(Array.from({ length: 8 }, writeSome));
    } finally {
      clearInterval(ticking);
    }
    process.stdout.write(
      `[backlog] ${count} jobs written in ${Math.round((performance.now() - started) / 1000)} s\n`,
    );
  }

  /**
   * Waits until the receiver has taken every request of the last round (its count holds for 100 ms):
   * one autocannon stopped waiting for may still be enqueued, and must not land in the next round's
   * emptied Redis, where it would count as backlog.
   */
  async function settled(): Promise<void> {
    let last = -1;
    for (let count = await requestCount(child); count !== last; count = await requestCount(child)) {
      last = count;
      await sleep(100);
    }
  }

  async function measure(round: number): Promise<Row> {
    const bodies = Array.from({ length: Math.ceil(rate * seconds * 1.05) }, nextRequest);
    await admin.config('RESETSTAT');
    const depth = await queuedJobs(redis.url, prefix);
    const requestsBefore = await requestCount(child);
    const ticksBefore = processTicks(pid);
    const redisBefore = await redisCpuSeconds(redis.url);
    const result = await loadAtRate(port, rate, seconds, bodies, nextRequest);
    const served = Math.max((await requestCount(child)) - requestsBefore, 1);
    const ticksAfter = processTicks(pid);
    const redisAfter = await redisCpuSeconds(redis.url);
    const calls = parseCommandStats(await admin.info('commandstats')).get('evalsha')?.calls;
    const ticks = ticksAfter.user + ticksAfter.system - ticksBefore.user - ticksBefore.system;
    return {
      round,
      depth,
      served,
      p99: result.latency.p99,
      failed: result.non2xx + result.errors,
      receiverMicros: (ticks * tickMicros) / served,
      redisMicros: ((redisAfter - redisBefore) * 1e6) / served,
      jobsPerCall: served / Math.max(calls ?? 0, 1),
    };
  }

  const rows: Row[] = [];
  try {
    await new Promise((ready) =>
      writer.client.status === 'ready' ? ready(undefined) : writer.client.once('ready', ready),
    );
    process.stdout.write(
      `[backlog] ${rounds} pairs of ${seconds} s rounds at ${rate} req/s, empty Redis against ${backlogJobs} queued jobs; signature schemes: ${schemes}; load average ${await loadAverage()}\n`,
    );
    await loadAtRate(port, rate, 3, [], nextRequest);
    await settled();
    for (let round = 1; round <= rounds; round += 1) {
      for (const depth of [0, backlogJobs]) {
        // Both kinds of round follow the same work (writing the backlog, emptying Redis), in the
        // other order, so whatever that work leaves behind (garbage in this process, freed memory
        // in Redis) weighs on both alike.
        if (depth === 0) await fillBacklog(backlogJobs);
        await admin.flushall();
        if (depth > 0) await fillBacklog(depth);
        rows.push(await measure(round));
        await settled();
        process.stdout.write(
          `[backlog] round ${round} at ${depth} queued done; load average ${await loadAverage()}\n`,
        );
      }
    }
  } finally {
    await stop();
  }
  const ratios = { receiver: [] as number[], redis: [] as number[] };
  for (let k = 0; k + 1 < rows.length; k += 2) {
    const [empty, deep] = [rows[k] as Row, rows[k + 1] as Row];
    ratios.receiver.push(deep.receiverMicros / empty.receiverMicros);
    ratios.redis.push(deep.redisMicros / empty.redisMicros);
  }
  const list = (values: number[]) => values.map((r) => r.toFixed(2)).join(', ');
  process.stdout.write(
    `\n| round | queued at start | requests | p99 ms | failed | receiver CPU us/req | redis CPU us/req | jobs per script call |\n` +
      `| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n` +
      rows
        .map(
          (r) =>
            `| ${r.round} | ${r.depth} | ${r.served} | ${r.p99} | ${r.failed} | ${r.receiverMicros.toFixed(1)} | ${r.redisMicros.toFixed(1)} | ${r.jobsPerCall.toFixed(1)} |`,
        )
        .join('\n') +
      `\nCPU per request with ${backlogJobs} queued / empty: receiver median ${median(ratios.receiver).toFixed(2)}x (rounds ${list(ratios.receiver)}), redis-server median ${median(ratios.redis).toFixed(2)}x (rounds ${list(ratios.redis)})\n`,
  );
  const failed = rows.reduce((sum, r) => sum + r.failed, 0);
  failOn(failed > 0 ? [`${failed} requests were not answered 2xx`] : []);
}

await main();

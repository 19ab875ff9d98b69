// `npm run bench:stream`: the live tray under load, on the embedded stack.
//   1. latency: --rate webhooks/s for --seconds through the receiver, two tray processes (API and
//      worker each) sharing the queue; one live stream per recipient, spread over both processes.
//      Measured from the receiver's acknowledgement to the `record` event on the stream: p50, p99,
//      after --warmup seconds at the same rate on the fresh processes (reported separately).
//   2. memory: --idle streams held open on one tray process; its RSS before and after. Then the
//      same on a stream server started with TRAY_ROLE=api (no worker).
//   3. fan-out: --members members of one community, each with an open stream (spread over both
//      tray processes), and one post there: the time from its acknowledgement until every
//      member's stream has its `record` event (target: 2 s for 10,000).
//   4. snoozes: --snoozes records of --snooze-users users, snoozed to end evenly within
//      --snooze-window seconds, each user with a stream open on one of the two tray processes: the
//      time from each record's end to its `record` event (target: p99 <= 1 s), none announced twice
//      (lib/snooze-wake-scenario.ts; its baseline is the claim statement run by hand).
//   5. renewals: --renewals counts of stream leases, each renewed as one instance's heartbeat
//      does (and once all at once, as heartbeats did before); the time and failures per round,
//      against bare ZADDs (lib/lease-renewal-scenario.ts). A heartbeat's renewal lost fails the run.
// Latency, fan-out and memory each print a baseline from the same run: the same load on two bare
// servers (lib/bare-stream-server.ts: node:http, one INSERT, Redis PUBLISH, SSE write) over the
// same stores, the floor the product's figures stand on.
// --scenarios picks some of them (latency,fanout,snooze,memory,renewals: all by default).
// Starts its own redis-server and a throwaway PostgreSQL cluster (unless REDIS_URL / DATABASE_URL
// point elsewhere) and its own receiver and tray processes. Needs a quiet machine.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sendSignedWebhook } from './lib/send-signed-webhook.ts';
import { UsageError } from '../shared/errors/usage-error.ts';
import { parseCli, runCli } from './lib/cli.ts';
import { openPostgresStorage } from '../tray-service/storage/postgres/open-postgres-storage.ts';
import { startBenchStores } from './lib/start-bench-stores.ts';
import { freePort } from './lib/local-servers.ts';
import { stopOnSignal, type Stoppable } from './lib/stop-on-signal.ts';
import { stopChild } from './lib/stop-child.ts';
import { hs256Token } from './lib/hs256-token.ts';
import { residentMb } from './lib/bench-process.ts';
import { waitHealthy } from './lib/wait-healthy.ts';
import { commentBody } from './lib/comment-body.ts';
import { snoozeWakeScenario } from './lib/snooze-wake-scenario.ts';
import { leaseRenewalScenario } from './lib/lease-renewal-scenario.ts';
import { openStream, type Stream } from './lib/sse-client.ts';
import { startBareStreamServer, type BareStreamServer } from './lib/bare-stream-server.ts';

const SCENARIOS = ['latency', 'fanout', 'snooze', 'memory', 'renewals'] as const;

const usage = `Usage: npm run bench:stream -- [--rate 200] [--seconds 30] [--recipients 100] [--idle 10000] [--warmup 5] [--members 10000]
         [--snoozes 100000] [--snooze-users 1000] [--snooze-window 60] [--snooze-lead 15] [--scenarios ${SCENARIOS.join(',')}]

  --rate        webhooks per second sent to the receiver (default 200)
  --seconds     how long to send (default 30)
  --recipients  users with an open stream, each receiving rate/recipients events/s (default 100)
  --idle        idle streams held on one tray process for the memory figure (default 10000)
  --warmup      seconds sent at the rate first, reported but not counted (default 5; 0: none)
  --members     members of the community whose post is timed to every member's stream (default 10000)
  --snoozes        records snoozed to end within the window, timed back to their user's stream (default 100000)
  --snooze-users   users those records belong to, each with a stream open (default 1000)
  --snooze-window  seconds within which the snoozes end, evenly (default 60)
  --snooze-lead    seconds from the streams being open to the first end; seeding must fit in it (default 15)
  --renewals      lease counts renewed at once, comma-separated (default 20000,40000,60000)
  --scenarios      which to run, comma-separated (default ${SCENARIOS.join(',')})`;

const root = resolve(import.meta.dirname, '..');
const SECRET = 'bench-stream-secret-of-at-least-32-chars';
const WEBHOOK_SECRET = 'bench-secret';

const token = (userId: string) => hs256Token(SECRET, userId, '2h');
/** What the baseline's bare servers do, named in every baseline line. */
const BARE_PATH = 'node:http, one INSERT, Redis PUBLISH, SSE write';

const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** A line on stderr every 1,000 streams opened one at a time: 10,000 take minutes. */
const openingProgress = (scenario: string, opened: number, total: number) => {
  if (opened % 1_000 === 0)
    process.stderr.write(`[bench:stream] ${scenario}: opening streams ${opened}/${total}\n`);
};

runCli(async () => {
  const { values } = parseCli(
    {
      args: process.argv.slice(2),
      options: {
        rate: { type: 'string', default: '200' },
        seconds: { type: 'string', default: '30' },
        recipients: { type: 'string', default: '100' },
        idle: { type: 'string', default: '10000' },
        warmup: { type: 'string', default: '5' },
        members: { type: 'string', default: '10000' },
        snoozes: { type: 'string', default: '100000' },
        'snooze-users': { type: 'string', default: '1000' },
        'snooze-window': { type: 'string', default: '60' },
        'snooze-lead': { type: 'string', default: '15' },
        renewals: { type: 'string', default: '20000,40000,60000' },
        scenarios: { type: 'string', default: SCENARIOS.join(',') },
      },
    },
    usage,
  );
  const numbers = {
    rate: Number(values.rate),
    seconds: Number(values.seconds),
    recipients: Number(values.recipients),
    idle: Number(values.idle),
    warmup: Number(values.warmup),
    members: Number(values.members),
    snoozes: Number(values.snoozes),
    'snooze-users': Number(values['snooze-users']),
    'snooze-window': Number(values['snooze-window']),
    'snooze-lead': Number(values['snooze-lead']),
  };
  for (const [name, value] of Object.entries(numbers)) {
    const least = name === 'warmup' ? 0 : 1;
    if (!Number.isInteger(value) || value < least)
      throw new UsageError(`--${name} expects a whole number >= ${least}`);
  }
  const renewalCounts = values.renewals.split(',').map(Number);
  if (renewalCounts.some((count) => !Number.isInteger(count) || count < 1))
    throw new UsageError(`--renewals expects whole numbers >= 1, comma-separated, got ${values.renewals}`);
  const scenarios = new Set(values.scenarios.split(',').filter(Boolean));
  const unknown = [...scenarios].filter((name) => !(SCENARIOS as readonly string[]).includes(name));
  if (unknown.length > 0 || scenarios.size === 0)
    throw new UsageError(`--scenarios expects some of ${SCENARIOS.join(',')}, got ${values.scenarios}`);
  let failedTargets = false;
  const dir = mkdtempSync(join(tmpdir(), 'bench-stream-'));
  const servers: Stoppable[] = [];
  const children: ChildProcess[] = [];
  const streams: Stream[] = [];
  const bare: BareStreamServer[] = [];
  const stop = stopOnSignal(async () => {
    for (const stream of streams) stream.close();
    await Promise.all(bare.map((server) => server.stop()));
    await Promise.all(children.map((child) => stopChild(child)));
    for (const server of servers.reverse()) await server.stop();
  }, dir);
  try {
    const { redisUrl, databaseUrl, redisPrefixes } = await startBenchStores(dir, 'bench_stream', servers);
    const trayPorts = [await freePort(), await freePort()];
    const receiverPort = await freePort();
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      LOG_LEVEL: 'warn',
      REDIS_URL: redisUrl,
      ...redisPrefixes,
      DATABASE_URL: databaseUrl,
      JWT_SECRET: SECRET,
      RATE_LIMIT_CALLS: '1000000',
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
    start('receiver/main.ts', {});
    const trays = trayPorts.map((port) => start('tray-service/main.ts', { TRAY_PORT: String(port) }));
    await Promise.all(
      [receiverPort, ...trayPorts].map((port) => waitHealthy(`http://127.0.0.1:${port}/healthz`, 120_000)),
    );
    // A channel of this run's: two runs on one REDIS_URL would read each other's records.
    const bareOptions = { redisUrl, databaseUrl, channel: `bench-stream-bare-${process.pid}-${Date.now()}` };
    // Two bare servers, as there are two tray processes, over the same stores.
    if (['latency', 'fanout'].some((name) => scenarios.has(name))) {
      bare.push(
        ...(await Promise.all([startBareStreamServer(bareOptions), startBareStreamServer(bareOptions)])),
      );
    }

    // 1. Latency: one stream per recipient, alternating between the two tray processes.
    if (scenarios.has('latency')) {
      const acked = new Map<string, number>();
      const arrived = new Map<string, number>();
      const latencies = new Map<string, number[]>();
      const settle = (postId: string) => {
        const ack = acked.get(postId);
        const at = arrived.get(postId);
        const phase = postId.split('-')[0] ?? '';
        // A record read before its ack (the worker quicker than the response) was there at the ack:
        // 0, not a negative latency that pulled the p50 down.
        if (ack !== undefined && at !== undefined) latencies.get(phase)?.push(Math.max(0, at - ack));
      };
      const recipients = Array.from({ length: numbers.recipients }, (_, i) => `u-r${i}`);
      const onRecord = (event: string, data: string) => {
        if (event !== 'record') return;
        const postId = (JSON.parse(data) as { targetId: string }).targetId;
        if (arrived.has(postId)) return;
        arrived.set(postId, performance.now());
        settle(postId);
      };
      for (const [i, user] of recipients.entries()) {
        openingProgress('latency', i, recipients.length);
        const port = trayPorts[i % 2];
        streams.push(
          await openStream(`http://127.0.0.1:${port}/notifications/v3/stream`, await token(user), onRecord),
        );
      }
      await sleep(500);
      let failed = 0;
      const webhook = (postId: string, recipient: string) =>
        sendSignedWebhook(
          `http://127.0.0.1:${receiverPort}/webhooks`,
          commentBody(recipient, postId, Date.now()),
          WEBHOOK_SECRET,
        );
      /**
       * Sends `seconds` of deliveries at the rate through `send` (the receiver's webhooks unless
       * told), their post ids prefixed `phase-`; waits for them.
       */
      const runPhase = async (phase: string, seconds: number, send = webhook) => {
        latencies.set(phase, []);
        failed = 0;
        const total = numbers.rate * seconds;
        const began = performance.now();
        const sends: Promise<void>[] = [];
        for (let i = 0; i < total; i += 1) {
          const due = began + (i * 1000) / numbers.rate;
          const wait = due - performance.now();
          if (wait > 0) await sleep(wait);
          const postId = `${phase}-${i}`;
          sends.push(
            send(postId, recipients[i % recipients.length] ?? 'u-r0').then(
              async (res) => {
                await res.arrayBuffer();
                if (res.status !== 200) failed += 1;
                acked.set(postId, performance.now());
                settle(postId);
              },
              () => void (failed += 1),
            ),
          );
        }
        await Promise.all(sends);
        const measured = latencies.get(phase) ?? [];
        const deadline = performance.now() + 15_000;
        while (measured.length < total - failed && performance.now() < deadline) await sleep(100);
        return { total, sorted: [...measured].sort((a, b) => a - b) };
      };
      const round = (ms: number) => Math.round(ms);
      const figures = (sorted: number[]) =>
        `p50 ${round(percentile(sorted, 50))} ms, p99 ${round(percentile(sorted, 99))} ms, max ${round(sorted.at(-1) ?? NaN)} ms`;
      // Freshly started processes compile their hot code and open their pools in the first seconds:
      // reported, not counted in the steady-state figure the target is about.
      if (numbers.warmup > 0) {
        const warm = await runPhase('w', numbers.warmup);
        process.stdout.write(
          `warm-up (not counted), ${numbers.rate}/s for ${numbers.warmup} s on fresh processes: ${figures(warm.sorted)}\n`,
        );
      }
      const steady = await runPhase('p', numbers.seconds);
      // Refused deliveries and records that never reached their stream are not in the figures,
      // which would look as good without them: the run fails instead.
      const lost = steady.total - failed - steady.sorted.length;
      process.stdout.write(
        `latency (ack -> SSE record), ${numbers.rate}/s for ${numbers.seconds} s, ${numbers.recipients} streams on 2 tray processes:\n` +
          `  sent ${steady.total}, refused ${failed}, delivered ${steady.sorted.length}${lost > 0 ? `, never delivered ${lost} - MISSED` : ''}${failed > 0 ? ' - MISSED (refused)' : ''}\n` +
          `  ${figures(steady.sorted)}\n`,
      );
      const p99 = percentile(steady.sorted, 99);
      process.stdout.write(`  ${p99 <= 1000 ? 'ok' : 'MISSED'} p99 <= 1000 ms\n`);
      if (failed > 0 || lost > 0 || !(p99 <= 1000)) failedTargets = true;
      for (const stream of streams.splice(0)) stream.close();
      // The baseline: the same rate and recipients on the bare servers, from a POST to the record.
      for (const [i, user] of recipients.entries())
        streams.push(await openStream(bare[i % 2]?.streamUrl(user) ?? '', '', onRecord));
      await sleep(500);
      const bareSend = (postId: string, recipient: string) =>
        (bare[0] as BareStreamServer).send({
          users: [recipient],
          data: JSON.stringify({ targetId: postId }),
        });
      // Warmed up as the product was: pools opened and statements compiled before the timed phase.
      if (numbers.warmup > 0) await runPhase('bw', numbers.warmup, bareSend);
      const bareRun = await runPhase('b', numbers.seconds, bareSend);
      const bareLost = bareRun.total - failed - bareRun.sorted.length;
      process.stdout.write(
        `  baseline, the bare path (${BARE_PATH}), the same rate and streams on 2 bare servers:\n` +
          `  ${figures(bareRun.sorted)}${failed + bareLost > 0 ? ` - ${failed + bareLost} not delivered` : ''}\n`,
      );
      for (const stream of streams.splice(0)) stream.close();
    }

    // 3. A post to a community whose every member has a stream open (members imported directly).
    if (scenarios.has('fanout')) {
      const storage = await openPostgresStorage(databaseUrl, {
        poolSize: 2,
        statementTimeoutMs: 60_000,
        applicationName: 'bench-stream',
      });
      const members = Array.from({ length: numbers.members }, (_, i) => `u-m${i}`);
      for (let from = 0; from < members.length; from += 5_000) {
        await storage.members.importBatch(
          members.slice(from, from + 5_000).map((userId) => ({ communityId: 'c-fan', userId, since: 0 })),
          0,
        );
      }
      await storage.close();
      /**
       * One stream per member (`open`), then `send`: how many streams got a `record` event that
       * `counts`, and the ms from the acknowledgement to the last of them.
       */
      const timeFanOut = async (
        open: (i: number, user: string, onEvent: (event: string, data: string) => void) => Promise<Stream>,
        counts: (data: string) => boolean,
        send: () => Promise<Response>,
      ) => {
        const reached = new Set<string>();
        let last = 0;
        const held: Stream[] = [];
        for (const [i, user] of members.entries()) {
          openingProgress('fan-out', i, members.length);
          held.push(
            await open(i, user, (event, data) => {
              if (event !== 'record' || reached.has(user) || !counts(data)) return;
              reached.add(user);
              last = performance.now();
            }),
          );
        }
        await sleep(1_000);
        const answer = await send();
        await answer.arrayBuffer();
        const ack = performance.now();
        const deadline = ack + 30_000;
        while (reached.size < members.length && performance.now() < deadline) await sleep(20);
        for (const stream of held) stream.close();
        return { reached: reached.size, lastMs: Math.round(last - ack), status: answer.status };
      };
      const postBody = JSON.stringify({
        event: 'post.didCreate',
        data: {
          post: {
            postId: 'p-fan',
            postedUserId: 'u-poster',
            targetType: 'community',
            targetId: 'c-fan',
            text: 'bench',
            createdAt: new Date().toISOString(),
            mentionees: [],
          },
          community: { communityId: 'c-fan', displayName: 'Fan-out Club' },
          users: [{ userId: 'u-poster', displayName: 'Poster' }],
        },
      });
      const fan = await timeFanOut(
        async (i, user, onEvent) =>
          openStream(
            `http://127.0.0.1:${trayPorts[i % 2]}/notifications/v3/stream`,
            await token(user),
            onEvent,
          ),
        (data) => (JSON.parse(data) as { targetId: string }).targetId === 'c-fan',
        () => sendSignedWebhook(`http://127.0.0.1:${receiverPort}/webhooks`, postBody, WEBHOOK_SECRET),
      );
      const fanOk = fan.status === 200 && fan.reached === members.length && fan.lastMs <= 2000;
      if (!fanOk) failedTargets = true;
      process.stdout.write(
        `fan-out (ack -> SSE record on every member's stream), one post to ${members.length} members with a stream each on 2 tray processes:\n` +
          `  reached ${fan.reached} of ${members.length} streams; the last ${fan.lastMs} ms after the acknowledgement (${fan.status}) - ${fanOk ? 'ok' : 'MISSED'} <= 2000 ms\n`,
      );
      // The baseline: one record to every member, each with a stream on one of the bare servers.
      const bareFan = await timeFanOut(
        (i, user, onEvent) => openStream(bare[i % 2]?.streamUrl(user) ?? '', '', onEvent),
        () => true,
        () => (bare[0] as BareStreamServer).send({ users: members, data: '{}' }),
      );
      process.stdout.write(
        `  baseline, the bare path (${BARE_PATH}), one record to every member on 2 bare servers:\n` +
          `  reached ${bareFan.reached} of ${members.length} streams` +
          (bareFan.reached > 0
            ? `; the last ${bareFan.lastMs} ms after the acknowledgement (${bareFan.status})\n`
            : ` (${bareFan.status})\n`),
      );
    }

    // 4. Snoozes ending within a window, each woken back onto its user's open stream.
    if (scenarios.has('snooze') && numbers.snoozes > 0) {
      const snoozes = await snoozeWakeScenario({
        databaseUrl,
        trayPorts,
        token,
        snoozes: numbers.snoozes,
        users: numbers['snooze-users'],
        windowMs: numbers['snooze-window'] * 1000,
        leadMs: numbers['snooze-lead'] * 1000,
        say: (line) => process.stderr.write(`[bench:stream] ${line}\n`),
      });
      process.stdout.write(`${snoozes.lines.join('\n')}\n`);
      if (!snoozes.ok) failedTargets = true;
    }

    // 2. Memory: idle streams on the first tray process (it has just carried the load as API and
    //    worker), then on a stream server of its own (TRAY_ROLE=api, freshly started).
    if (scenarios.has('memory')) {
      const holdIdle = async (
        what: string,
        pid: number,
        open: (i: number) => Promise<Stream>,
        limitMb?: number,
      ) => {
        await sleep(2_000);
        const before = residentMb(pid);
        const held: Stream[] = [];
        for (let i = 0; i < numbers.idle; i += 1) {
          openingProgress('idle', i, numbers.idle);
          held.push(await open(i));
        }
        streams.push(...held);
        await sleep(3_000);
        const after = residentMb(pid);
        process.stdout.write(
          `memory: ${what} RSS ${before} MB idle, ${after} MB with ${numbers.idle} open streams` +
            ` (${Math.round(((after - before) * 1024 * 10) / numbers.idle) / 10} kB a stream)` +
            (limitMb === undefined ? '' : ` - ${after <= limitMb ? 'ok' : 'MISSED'} <= ${limitMb} MB`) +
            '\n',
        );
        if (limitMb !== undefined && !(after <= limitMb)) failedTargets = true;
        for (const stream of held) stream.close();
      };
      const trayStream = (port: number | undefined, users: string) => async (i: number) =>
        openStream(`http://127.0.0.1:${port}/notifications/v3/stream`, await token(`${users}${i}`), () => {});
      await holdIdle(
        'one tray process (API and worker)',
        trays[0]?.pid ?? 0,
        trayStream(trayPorts[0], 'u-idle'),
      );
      const apiPort = await freePort();
      const apiOnly = start('tray-service/main.ts', { TRAY_PORT: String(apiPort), TRAY_ROLE: 'api' });
      await waitHealthy(`http://127.0.0.1:${apiPort}/healthz`, 120_000);
      // The target is for the default 10,000 streams on a stream server of its own.
      const limitMb = numbers.idle >= 10_000 ? 500 : undefined;
      await holdIdle(
        'a stream server (TRAY_ROLE=api)',
        apiOnly.pid ?? 0,
        trayStream(apiPort, 'u-api'),
        limitMb,
      );
      // A fresh one, as the stream server above is: one that held the earlier scenarios' streams
      // reuses the memory they left, and its figure read a third of a fresh server's.
      const bareOne = await startBareStreamServer(bareOptions);
      bare.push(bareOne);
      await holdIdle(`baseline, a bare server (${BARE_PATH})`, bareOne.pid, (i) =>
        openStream(bareOne.streamUrl(`u-bare${i}`), '', () => {}),
      );
    }

    // 5. Lease renewals: one instance's heartbeat with that many streams, against Redis alone.
    if (scenarios.has('renewals')) {
      const { lines, failed } = await leaseRenewalScenario(redisUrl, 'bench-stream', renewalCounts);
      if (failed > 0) failedTargets = true;
      process.stdout.write(`${lines.join('\n')}\n`);
    }
    return failedTargets ? 1 : 0;
  } finally {
    await stop();
  }
});

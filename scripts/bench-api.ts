// `npm run bench:api`: latency of the tray API's views and counts among --total records on the
// default storage (PostgreSQL), each call next to the plain statement it stands on and to the
// floor no HTTP API can go below on this machine (a bare node:http server running that statement),
// all measured in the same run. Three users beside the rest: `bench-user`, records spread over the
// 90-day retention; `bench-dense`, records all written within one minute; `bench-archive`, records
// in its inbox with --archived archived and --snoozed snoozed ones among them. For each user and
// each view it has (inbox, archived, snoozed, all): the first page and a deep page (--deep records
// down); and GET v3, both counts of the inbox (unread and unseen). Target: p99 <= 5 ms and within
// 1.5 ms of the floor's p99. Also prints the bytes a record takes on disk with its indexes.
// The API runs here as main.ts wires it; the client runs in a process of its own
// (lib/bench-api-client.ts). --stages adds, per user and route, where the server's time goes, and
// per user the causes of the calls slower than the floor's p99 + 1.5 ms (lib/slow-call-causes.ts);
// --gc, the garbage collections that ran during the API's requests and during the floor's.
// Starts its own redis-server and a throwaway PostgreSQL cluster unless REDIS_URL / DATABASE_URL
// point elsewhere. BENCHMARKS.md records the latest run.
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { resolveJwtConfig } from '../shared/config/tray-api-config.ts';
import { UsageError } from '../shared/errors/usage-error.ts';
import { closeServer, listen } from '../shared/http/listen.ts';
import { createMetricsRegistry } from '../shared/http/metrics-router.ts';
import { createLogger } from '../shared/logging/create-logger.ts';
import { createRedis } from '../shared/redis/create-redis.ts';
import type { InboxView } from '../tray-service/domain/inbox-view.ts';
import { startBanCache } from '../tray-service/http/auth/ban-cache.ts';
import { cacheVerifiedTokens } from '../tray-service/http/auth/cache-verified-tokens.ts';
import { createTokenVerifier } from '../tray-service/http/auth/create-token-verifier.ts';
import { createTrayApi } from '../tray-service/api/create-tray-api.ts';
import { createRateLimiter } from '../tray-service/http/rate-limit/create-rate-limiter.ts';
import { createFailedAuthLimit } from '../tray-service/http/rate-limit/failed-auth-limit.ts';
import { createMessageRenderer } from '../tray-service/messages/create-message-renderer.ts';
import { openPostgresStorage } from '../tray-service/storage/postgres/open-postgres-storage.ts';
import type { BenchCall, CallSamples } from './lib/bench-api-client.ts';
import { startBenchFloor } from './lib/bench-api-floor.ts';
import {
  deepCursor,
  plainPage,
  plainUnreadCount,
  plainUnseenCount,
  type PlainStatement,
} from './lib/bench-api-plain.ts';
import {
  BENCH_ARCHIVE,
  BENCH_DENSE,
  BENCH_USER,
  benchApiGroups,
  benchUsersRecords,
  RETENTION_MS,
} from './lib/bench-api-groups.ts';
import { parseCli, runCli } from './lib/cli.ts';
import { hs256Token } from './lib/hs256-token.ts';
import { stopOnSignal, type Stoppable } from './lib/stop-on-signal.ts';
import { forkBenchClient } from './lib/fork-bench-client.ts';
import { dirtyMegabytes } from './lib/dirty-pages.ts';
import { gcTable, startGcTally } from './lib/gc-during-requests.ts';
import { explainStatements } from './lib/explain-statements.ts';
import { describeFootprint, recordFootprint } from './lib/record-footprint.ts';
import { seedBenchRecords } from './lib/seed-bench-records.ts';
import { quantile } from './lib/quantile.ts';
import { slowCallCauses, slowCallTable } from './lib/slow-call-causes.ts';
import { createStageTimer } from './lib/stage-timer.ts';
import { startBenchStores } from './lib/start-bench-stores.ts';
import {
  requestName,
  stageTable,
  timedLimiter,
  timedMessages,
  timedStorage,
  timedVerifier,
  timeJson,
  timeRequests,
} from './lib/tray-api-stages.ts';
import { POSTGRES_SESSION_OPTIONS } from '../tray-service/storage/postgres/connect-postgres.ts';

const usage = `Usage: npm run bench:api -- [--total 10000000] [--user-records 1000] [--dense-records 1200] [--archived 1000] [--snoozed 100] [--deep 500] [--rounds 1000] [--settle 30] [--batch 500000] [--stages] [--explain]

  --total          records in the table, every user's (default 10000000)
  --user-records   bench-user's records, spread over 90 days; also bench-archive's inbox (default 1000)
  --dense-records  bench-dense's records, all within one minute (default 1200)
  --archived       bench-archive's archived records (default 1000)
  --snoozed        bench-archive's snoozed records (default 100)
  --deep           where the deep page of a view starts, in records (default 500)
  --rounds         times each call is measured (default 1000: a p99 is the 10th slowest)
  --settle         seconds of untimed calls before the first user is measured, after the load (default 30)
  --batch          records inserted per statement while seeding (default 500000)
  --stages         also time where the server's time goes, per user and route, and say where each
                   call slower than the floor's p99 + 1.5 ms lost its time
  --gc             also count the garbage collections that ran during the API's and the floor's requests
  --explain        also print EXPLAIN (ANALYZE, BUFFERS) of each plain statement`;

const TARGET_MS = 5;
const FLOOR_MARGIN_MS = 1.5;
const TARGET = `p99 <= ${TARGET_MS} ms and within ${FLOOR_MARGIN_MS} ms of the floor`;
const PAGE_SIZE = 10;
const USER = BENCH_USER;
const DENSE = BENCH_DENSE;
const ARCHIVE = BENCH_ARCHIVE;
const SECRET = `bench-${Math.random().toString(36).slice(2)}-secret-of-at-least-32-characters`;

const say = (line: string) => process.stderr.write(`[bench:api] ${line}\n`);
const ms = (n: number) => `${n.toFixed(2)} ms`;
const row = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;

runCli(async () => {
  const { values } = parseCli(
    {
      args: process.argv.slice(2),
      options: {
        total: { type: 'string', default: '10000000' },
        'user-records': { type: 'string', default: '1000' },
        'dense-records': { type: 'string', default: '1200' },
        archived: { type: 'string', default: '1000' },
        snoozed: { type: 'string', default: '100' },
        deep: { type: 'string', default: '500' },
        rounds: { type: 'string', default: '1000' },
        settle: { type: 'string', default: '30' },
        batch: { type: 'string', default: '500000' },
        stages: { type: 'boolean', default: false },
        gc: { type: 'boolean', default: false },
        explain: { type: 'boolean', default: false },
      },
    },
    usage,
  );
  const option = (name: keyof typeof values, least: number) => {
    const value = Number(values[name]);
    if (!Number.isSafeInteger(value) || value < least)
      throw new UsageError(`--${name}: expected a whole number >= ${least}`);
    return value;
  };
  const total = option('total', 1);
  const userRecords = option('user-records', 1);
  const denseRecords = option('dense-records', 1);
  const archived = option('archived', 1);
  const snoozed = option('snoozed', 1);
  const deep = option('deep', 1);
  const rounds = option('rounds', 1);
  const settleMs = option('settle', 0) * 1000;
  const batch = option('batch', 1);
  const benchUsers = benchUsersRecords({ userRecords, denseRecords, archived, snoozed });
  if (total <= benchUsers)
    throw new UsageError(
      `--total: expected more than the bench users' ${benchUsers} records (2 x --user-records + --dense-records + --archived + --snoozed)`,
    );

  const dir = mkdtempSync(join(tmpdir(), 'bench-api-'));
  const servers: Stoppable[] = [];
  const stopServers = stopOnSignal(async () => {
    for (const server of servers.splice(0).reverse()) await server.stop();
  }, dir);
  try {
    // A database of the bench's own: dropped at the end on a server of the operator's.
    const { redisUrl, databaseUrl: url } = await startBenchStores(dir, 'bench_api', servers);
    const storage = await openPostgresStorage(url, {
      poolSize: 10,
      statementTimeoutMs: 60_000,
      applicationName: 'bench-api',
    });
    const sql = new pg.Pool({ connectionString: url, options: POSTGRES_SESSION_OPTIONS, max: 2 });
    // pool.end() resolves before its connections have closed: the server stopping right after must
    // not end the run with an unhandled error.
    sql.on('error', () => undefined);
    try {
      const sizes = { total, userRecords, denseRecords, archived, snoozed, now: Date.now() };
      const { groups, otherUsers } = benchApiGroups(sizes);
      say(`seeding ${total.toLocaleString('en-US')} records (${otherUsers} other users) in SQL`);
      await seedBenchRecords(sql, groups, { retentionMs: RETENTION_MS, batch, say });
      const footprint = await recordFootprint(sql);

      const redis = createRedis(redisUrl);
      const silent = createLogger({ name: 'bench', level: 'silent' });
      const stages = values.stages ? createStageTimer() : undefined;
      const app = createTrayApi({
        logger: silent,
        storage: stages ? timedStorage(storage, stages) : storage,
        redis,
        redisProbeKey: 'bench-write-probe',
        registry: createMetricsRegistry('bench', false),
        metrics: { kind: 'open' },
        // As main.ts wires it: verifications reused until the token's exp.
        verifyToken: timedVerifier(
          stages,
          cacheVerifiedTokens(createTokenVerifier(resolveJwtConfig({ JWT_SECRET: SECRET }))),
        ),
        // As in production: the hot path consults this in-memory set on every request.
        bans: await startBanCache(redis, { prefix: 'bench-bans', refreshMs: 500, logger: silent }),
        rateLimiter: timedLimiter(
          stages,
          createRateLimiter({ redis, points: 1_000_000, windowMs: 60_000, keyPrefix: 'bench-rl' }),
        ),
        // As in production: a caller in good standing costs an in-memory look-up per request.
        failedAuth: createFailedAuthLimit({ redis, points: 20, windowMs: 60_000, keyPrefix: 'bench-auth' }),
        messages: timedMessages(stages, createMessageRenderer({ defaultLocale: 'en' })),
        settings: { pageSize: PAGE_SIZE, networkId: 'bench', blockApi: true, retentionDays: 90 },
      });
      if (stages) timeJson(app, stages);
      const server = await listen(app, { port: 0, host: '127.0.0.1' });
      if (stages) timeRequests(server, stages);
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

      // The floor under any API call (lib/bench-api-floor.ts), over the seeding pool.
      const floor = await startBenchFloor(sql);
      const gc = values.gc ? startGcTally() : undefined;
      gc?.watch(server, () => 'API');
      gc?.watch(floor.server, (path) => (path === '/' ? 'bare hop' : 'floor'));

      /** A user's calls: each view's first page and deep page (where it has one), then GET v3. */
      const callsOf = async (userId: string, views: readonly InboxView[]): Promise<BenchCall[]> => {
        const calls: BenchCall[] = [];
        const add = (name: string, path: string, statements: PlainStatement[], check: BenchCall['check']) => {
          const barePath = `/${userId}/${calls.length}`;
          floor.serve(barePath, statements);
          calls.push({ name, path, statements, barePath, check });
        };
        for (const view of views) {
          const path = (startAfter?: number) => {
            const query = new URLSearchParams();
            if (view !== 'inbox') query.set('view', view);
            if (startAfter !== undefined) query.set('startAfter', String(startAfter));
            const search = query.toString();
            return `/notifications/v3/history${search ? `?${search}` : ''}`;
          };
          add(`${view}, first page`, path(), [plainPage(userId, view, undefined, PAGE_SIZE)], 'page');
          const at = (await sql.query<{ at: number }>(deepCursor(userId, view, deep))).rows[0]?.at;
          if (at === undefined) continue;
          add(`${view}, page at record ${deep}`, path(at), [plainPage(userId, view, at, PAGE_SIZE)], 'page');
        }
        const counts = [plainUnreadCount(userId), plainUnseenCount(userId)];
        const [unread, unseen] = await Promise.all(
          counts.map(async (statement) => (await sql.query<{ n: number }>(statement)).rows[0]?.n ?? 0),
        );
        add(
          `GET v3: both counts (${unread} unread, ${unseen} unseen)`,
          '/notifications/v3',
          counts,
          'counts',
        );
        return calls;
      };

      // The client runs in a process of its own (scripts/lib/bench-api-client.ts).
      const client = forkBenchClient();

      // Right after the load, every request runs slower for some 20 s, the API's, the floor's and
      // the bare hop's alike, whichever user comes first (BENCHMARKS.md): the first user's warm-up
      // lasts --settle seconds, so no user is measured in that transient.
      const measure = async (userId: string, views: readonly InboxView[], warmupMs = 0) => {
        const calls = await callsOf(userId, views);
        const token = await hs256Token(SECRET, userId);
        if (warmupMs > 0) say(`settling for ${warmupMs / 1000} s: ${userId}'s calls, untimed`);
        const job = {
          base,
          bare: floor.url,
          databaseUrl: url,
          token,
          pageSize: PAGE_SIZE,
          calls,
          rounds,
          warmupMs,
        };
        let dirtyBefore: number | undefined;
        const samples = await client.run(job, () => {
          stages?.take(); // the warm-up's
          gc?.reset();
          dirtyBefore = dirtyMegabytes();
          say(`measuring ${userId}: ${calls.length} calls x ${rounds} rounds`);
        });
        const dirty = { before: dirtyBefore, after: dirtyMegabytes() };
        // Sorted copies: the slow calls' causes pair each call with its request by round order.
        const sorted = (list: readonly number[] = []) => [...list].sort((x, y) => x - y);
        const sort = (call: CallSamples | undefined): CallSamples => ({
          api: sorted(call?.api),
          plain: sorted(call?.plain),
          bare: sorted(call?.bare),
        });
        const measured = calls.map((call, i) => ({ call, samples: sort(samples.calls[i]) }));
        const taken = stages?.take();
        const slow =
          taken &&
          slowCallCauses(
            measured.map(({ call, samples: { bare } }, i) => ({
              route: requestName('GET', call.path),
              api: samples.calls[i]?.api ?? [],
              slowOverMs: quantile(bare, 0.99) + FLOOR_MARGIN_MS,
            })),
            taken,
          );
        return {
          userId,
          calls: measured,
          hop: sorted(samples.hop),
          dirty,
          stages: taken,
          slow,
          gc: await gc?.take(),
        };
      };

      const results = [
        await measure(USER, ['inbox', 'all'], settleMs),
        await measure(DENSE, ['inbox', 'all']),
        await measure(ARCHIVE, ['inbox', 'archived', 'snoozed', 'all']),
      ];
      client.exit();

      const out = [
        `bench:api  ${total.toLocaleString('en-US')} records (${otherUsers} other users); ${USER} ${userRecords} over 90 days, ${DENSE} ${denseRecords} within one minute, ${ARCHIVE} ${userRecords} in its inbox, ${archived} archived and ${snoozed} snoozed among them; pages of ${PAGE_SIZE}; ${rounds} calls of each after a warm-up; client in its own process; node ${process.version}, PostgreSQL storage`,
        describeFootprint(footprint),
        '',
        row([
          'user',
          'call',
          'API p50',
          'API p99',
          'plain SQL p50',
          'plain SQL p99',
          'floor p50',
          'floor p99',
          'API p99 - floor p99',
          'target',
        ]),
        row(Array.from({ length: 10 }, () => '---')),
      ];
      let failed = false;
      for (const { userId, calls } of results) {
        for (const { call, samples } of calls) {
          const p99 = quantile(samples.api, 0.99);
          const above = p99 - quantile(samples.bare, 0.99);
          const ok = p99 <= TARGET_MS && above <= FLOOR_MARGIN_MS;
          if (!ok) failed = true;
          out.push(
            row([
              userId,
              call.name,
              ms(quantile(samples.api, 0.5)),
              ms(p99),
              ms(quantile(samples.plain, 0.5)),
              ms(quantile(samples.plain, 0.99)),
              ms(quantile(samples.bare, 0.5)),
              ms(quantile(samples.bare, 0.99)),
              ms(above),
              `${ok ? 'ok' : 'MISSED'}: ${TARGET}`,
            ]),
          );
        }
      }
      out.push(
        '',
        'floor: a node:http server in the API process running the same plain statements (the counts together) and answering their rows; bare hop: the same server answering a constant body',
        ...results.map(
          ({ userId, hop, dirty }) =>
            `${userId}: bare hop p50 ${ms(quantile(hop, 0.5))}, p99 ${ms(quantile(hop, 0.99))}; file data not yet on disk ${dirty.before ?? '?'} MB at the start, ${dirty.after ?? '?'} MB at the end`,
        ),
      );
      for (const { userId, stages: taken } of results) if (taken) out.push('', ...stageTable(userId, taken));
      const slowCalls = results.flatMap(({ userId, slow }) => (slow ? [{ userId, slow }] : []));
      if (slowCalls.length > 0)
        out.push('', ...slowCallTable(slowCalls, `the floor's p99 + ${FLOOR_MARGIN_MS} ms`));
      for (const { userId, gc: tally } of results) if (tally) out.push('', ...gcTable(userId, tally));
      gc?.stop();
      if (values.explain) {
        const statements = results.flatMap(({ userId, calls }) =>
          calls.flatMap(({ call }) =>
            call.statements.map((statement) => ({ name: `${userId}, ${call.name}`, statement })),
          ),
        );
        out.push('', ...(await explainStatements(sql, statements)));
      }
      process.stdout.write(`${out.join('\n')}\n`);
      await closeServer(server);
      floor.close();
      redis.disconnect();
      return failed ? 1 : 0;
    } finally {
      await sql.end();
      await storage.close();
    }
  } finally {
    await stopServers();
  }
});

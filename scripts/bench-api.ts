// `npm run bench:api`: latency of GET /notifications/v3/history (a walk through --pages pages) and
// GET /notifications/v3 (the unread count) on the default storage (PostgreSQL) among --total
// records, each call followed by the plain indexed SELECT it stands on, in the same run. Two
// users: `bench-user`, whose --user-records records are spread over the 90-day retention, and
// `bench-dense`, with --dense-records records all written within one minute and none read.
// Targets: p99 <= 5 ms for both calls and both users, and <= 2x the plain SELECT. A bare HTTP hop
// (node:http answering a constant body) is timed too and printed as the floor under any call.
// The API runs here as main.ts wires it; the client runs in a process of its own
// (lib/bench-api-client.ts: keep-alive HTTP, the plain SELECTs timed the same way, a warm-up walk
// not counted). --stages adds, per user and route, where the server's time goes (lib/tray-api-stages.ts).
// Options: --total <n> (1000000) --user-records <n> (1000) --dense-records <n> (1200) --pages <n>
// (20) --rounds <n> (100: each walk repeated; 2,000 calls of each, so a p99 is the 20th slowest)
// --stages. Starts its own redis-server and a throwaway PostgreSQL cluster unless REDIS_URL /
// DATABASE_URL point elsewhere.
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { resolveJwtConfig } from '../shared/config/tray-api-config.ts';
import { closeServer, listen } from '../shared/http/listen.ts';
import { createMetricsRegistry } from '../shared/http/metrics-router.ts';
import { createLogger } from '../shared/logging/create-logger.ts';
import { createRedis } from '../shared/redis/create-redis.ts';
import { DAY_MS } from '../shared/time/durations.ts';
import { startBanCache } from '../tray-service/http/auth/ban-cache.ts';
import { cacheVerifiedTokens } from '../tray-service/http/auth/cache-verified-tokens.ts';
import { createTokenVerifier } from '../tray-service/http/auth/create-token-verifier.ts';
import { createTrayApi } from '../tray-service/api/create-tray-api.ts';
import { createRateLimiter } from '../tray-service/http/rate-limit/create-rate-limiter.ts';
import { createFailedAuthLimit } from '../tray-service/http/rate-limit/failed-auth-limit.ts';
import { createMessageRenderer } from '../tray-service/messages/create-message-renderer.ts';
import { openPostgresStorage } from '../tray-service/storage/postgres/open-postgres-storage.ts';
import type { FromBenchClient, ToBenchClient } from './lib/bench-api-client.ts';
import { PLAIN_COUNT_SQL } from './lib/bench-api-plain.ts';
import { createBenchDatabase } from './lib/create-bench-database.ts';
import { startPostgres, startRedis, type LocalServer } from './lib/local-servers.ts';
import { hs256Token } from './lib/hs256-token.ts';
import { createStageTimer } from './lib/stage-timer.ts';
import {
  stageTable,
  timedLimiter,
  timedMessages,
  timedStorage,
  timedVerifier,
  timeJson,
  timeRequests,
} from './lib/tray-api-stages.ts';

const { values } = parseArgs({
  options: {
    total: { type: 'string', default: '1000000' },
    'user-records': { type: 'string', default: '1000' },
    'dense-records': { type: 'string', default: '1200' },
    pages: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '100' },
    stages: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  process.stdout.write(
    'usage: npm run bench:api -- [--total 1000000] [--user-records 1000] [--dense-records 1200] [--pages 20] [--rounds 100] [--stages]\n',
  );
  process.exit(0);
}
const TOTAL = Number(values.total);
const USER_RECORDS = Number(values['user-records']);
const DENSE_RECORDS = Number(values['dense-records']);
const PAGES = Number(values.pages);
const ROUNDS = Number(values.rounds);
const PAGE_SIZE = 10;
const OTHER_USERS = 10_000;
const SECRET = `bench-${Math.random().toString(36).slice(2)}-secret-of-at-least-32-characters`;
const USER = 'bench-user';
const DENSE = 'bench-dense';

const say = (line: string) => process.stderr.write(`[bench:api] ${line}\n`);
const dir = mkdtempSync(join(tmpdir(), 'bench-api-'));
const servers: LocalServer[] = [];
const stopServers = async () => {
  for (const server of servers.splice(0).reverse()) await server.stop();
  rmSync(dir, { recursive: true, force: true });
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void stopServers().then(() => process.exit(130)));
}
const keep = (server: LocalServer) => (servers.push(server), server);
const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
const ms = (n: number) => `${n.toFixed(2)} ms`;

try {
  const redisUrl = process.env.REDIS_URL ?? keep(await startRedis({ dir: join(dir, 'redis') })).url;
  const serverUrl =
    process.env.DATABASE_URL ??
    keep(await startPostgres({ dir: join(dir, 'postgres'), durability: 'persistent' })).url;
  // A database of the bench's own: the baselines' scratch tables sit beside the tray's.
  const url = await createBenchDatabase(serverUrl, 'bench_api');
  const storage = await openPostgresStorage(url, {
    poolSize: 10,
    statementTimeoutMs: 60_000,
    applicationName: 'bench-api',
  });
  const sql = new pg.Pool({ connectionString: url, max: 2 });
  // pool.end() resolves before its connections have closed: the server stopping right after must
  // not end the run with an unhandled error.
  sql.on('error', () => undefined);
  const now = Date.now();
  const retention = 90 * DAY_MS;

  // Seeding in SQL (the worker would take hours for a million records): every 3 records share one
  // lastUpdate, like bursts of activity in the same millisecond.
  const seed = async (userExpr: string, count: number, lastUpdateExpr: string, readExpr: string) => {
    const started = performance.now();
    for (let from = 0; from < count; from += 100_000) {
      const to = Math.min(count, from + 100_000) - 1;
      await sql.query(
        `INSERT INTO tray_records (user_id, key, verb, target_id, target_type, target_name,
           last_action_id, feed, actors, actors_count, count_from, last_update, has_read, unread_at,
           changed_at, expires_at)
         SELECT u, (CASE WHEN i % 7 = 0 THEN 'mention' ELSE 'comment' END) || '_t' || i || '_' || u,
           CASE WHEN i % 7 = 0 THEN 'mention' ELSE 'comment' END, 't' || i, 'post', 'Hiking Club',
           'c' || i, '{"kind":"community","id":"c1","name":"Hiking Club"}',
           '[{"userId":"a","name":"Ana","at":1},{"userId":"b","name":"Ben","at":0}]', 2 + i % 5,
           lu - 5, lu, ${readExpr}, lu, lu, lu + ${retention}
         FROM (SELECT i, ${userExpr} AS u, ${lastUpdateExpr} AS lu FROM generate_series($1::int, $2::int) i) s`,
        [from, to],
      );
    }
    say(`  ${count} records in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  };
  say(`seeding ${TOTAL} records`);
  const others = TOTAL - USER_RECORDS - DENSE_RECORDS;
  await seed(
    `'u' || (i % ${OTHER_USERS})`,
    others,
    `${now - 60_000} - ((i / ${OTHER_USERS}) / 3 * 3)::bigint * ${Math.floor((retention - DAY_MS) / Math.max(1, others / OTHER_USERS))}`,
    `i % 3 = 0`,
  );
  await seed(
    `'${USER}'`,
    USER_RECORDS,
    `${now - 60_000} - (i / 3 * 3)::bigint * ${Math.floor((retention - DAY_MS) / USER_RECORDS)}`,
    `i > ${USER_RECORDS / 2}`,
  );
  await seed(`'${DENSE}'`, DENSE_RECORDS, `${now - 60_000} - (i / 3 * 3)::bigint * 50`, 'false');
  await sql.query('VACUUM ANALYZE tray_records');

  const redis = createRedis(redisUrl);
  const silent = createLogger({ name: 'bench', level: 'silent' });
  const stages = values.stages ? createStageTimer() : undefined;
  const app = createTrayApi({
    logger: silent,
    storage: stages ? timedStorage(storage, stages) : storage,
    redis,
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
    settings: { pageSize: PAGE_SIZE, networkId: 'bench', blockApi: true },
  });
  if (stages) timeJson(app, stages);
  const server = await listen(app, { port: 0, host: '127.0.0.1' });
  if (stages) timeRequests(server, stages);
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The floor under any API call: an HTTP hop to this process that does nothing but answer, and
  // the same hop running the plain count (no framework, no authentication, no rate limit).
  const bareServer = createServer((req, res) => {
    const answer = (status: number, count: number) => {
      res.statusCode = status;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ data: { totalUnreadCount: count } }));
    };
    const user = new URL(req.url ?? '/', 'http://bare').searchParams.get('user');
    if (user === null) return answer(200, 0);
    // The seeding pool, idle while the client measures.
    sql.query<{ count: string }>(PLAIN_COUNT_SQL, [user]).then(
      (result) => answer(200, Number(result.rows[0]?.count ?? 0)),
      () => answer(500, 0),
    );
  });
  await new Promise<void>((resolve) => bareServer.listen(0, '127.0.0.1', resolve));
  const bare = `http://127.0.0.1:${(bareServer.address() as AddressInfo).port}/`;

  // The client runs in a process of its own (scripts/lib/bench-api-client.ts).
  const client = fork(new URL('./lib/bench-api-client.ts', import.meta.url), { stdio: 'inherit' });
  process.once('exit', () => client.kill());
  const replies: FromBenchClient[] = [];
  let waiting: ((reply: FromBenchClient) => void) | undefined;
  client.on('message', (reply: FromBenchClient) => {
    if (waiting) {
      const resolve = waiting;
      waiting = undefined;
      resolve(reply);
    } else replies.push(reply);
  });
  const exited = new Promise<never>((_resolve, reject) =>
    client.once('exit', (code) => reject(new Error(`the bench client exited (${code})`))),
  );
  const reply = () =>
    Promise.race([
      exited,
      new Promise<FromBenchClient>((resolve) => {
        const queued = replies.shift();
        if (queued) resolve(queued);
        else waiting = resolve;
      }),
    ]);
  const tell = (message: ToBenchClient) => client.send(message);

  async function measure(userId: string) {
    tell({
      kind: 'run',
      job: {
        base,
        bare,
        databaseUrl: url,
        userId,
        token: await hs256Token(SECRET, userId),
        pageSize: PAGE_SIZE,
        pages: PAGES,
        rounds: ROUNDS,
      },
    });
    if ((await reply()).kind !== 'warmed') throw new Error('bench client: expected warmed');
    stages?.take(); // the warm-up's
    tell({ kind: 'go' });
    const done = await reply();
    if (done.kind !== 'samples') throw new Error('bench client: expected samples');
    const t = done.samples;
    for (const list of [t.page, t.plainPage, t.unread, t.plainCount, t.hop, t.bareCount])
      list.sort((x, y) => x - y);
    return { ...t, stages: stages?.take() };
  }

  const results = { [USER]: await measure(USER), [DENSE]: await measure(DENSE) };
  tell({ kind: 'exit' });
  exited.catch(() => undefined);
  const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const out = [
    `bench:api  ${TOTAL} records, ${USER} ${USER_RECORDS} over 90 days, ${DENSE} ${DENSE_RECORDS} within one minute; ${PAGES} pages of ${PAGE_SIZE} x ${ROUNDS} rounds (${results[USER].page.length} and ${results[DENSE].page.length} calls each) after a warm-up walk; client in its own process; node ${process.version}, PostgreSQL storage`,
    row(['user', 'call', 'p50', 'p99', 'plain SELECT p50', 'plain SELECT p99', 'p99 ratio', 'target']),
    row(['---', '---', '---', '---', '---', '---', '---', '---']),
  ];
  let failed = false;
  for (const [userId, r] of Object.entries(results)) {
    for (const [call, api, plain] of [
      ['GET /notifications/v3/history', r.page, r.plainPage],
      [`GET /notifications/v3 (${r.unreadCount} unread)`, r.unread, r.plainCount],
    ] as const) {
      const p99 = quantile(api, 0.99);
      const ratio = p99 / quantile(plain, 0.99);
      const ok = p99 <= 5 && ratio <= 2;
      if (!ok) failed = true;
      out.push(
        row([
          userId,
          call,
          ms(quantile(api, 0.5)),
          ms(p99),
          ms(quantile(plain, 0.5)),
          ms(quantile(plain, 0.99)),
          `${ratio.toFixed(2)}x`,
          `${ok ? 'ok' : 'MISSED'} (<= 5 ms, <= 2x)`,
        ]),
      );
    }
  }
  // What no API call can go below on this machine: the hop alone, and the hop plus the statement.
  for (const [userId, r] of Object.entries(results)) {
    out.push(
      '',
      `${userId}: bare HTTP hop (node:http, constant body, no work) p50 ${ms(quantile(r.hop, 0.5))}, p99 ${ms(quantile(r.hop, 0.99))}; its p99 is ${(quantile(r.hop, 0.99) / quantile(r.plainCount, 0.99)).toFixed(2)}x the plain count's`,
      `${userId}: bare HTTP hop + plain count (node:http, the plain statement, no framework) p50 ${ms(quantile(r.bareCount, 0.5))}, p99 ${ms(quantile(r.bareCount, 0.99))}; its p99 is ${(quantile(r.bareCount, 0.99) / quantile(r.plainCount, 0.99)).toFixed(2)}x the plain count's`,
    );
  }
  for (const [userId, r] of Object.entries(results)) {
    if (r.stages) out.push('', ...stageTable(userId, r.stages));
  }
  process.stdout.write(`${out.join('\n')}\n`);
  process.exitCode = failed ? 1 : 0;
  await closeServer(server);
  bareServer.close();
  redis.disconnect();
  await sql.end();
  await storage.close();
} finally {
  await stopServers();
}

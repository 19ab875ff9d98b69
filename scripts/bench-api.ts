// `npm run bench:api`: latency of GET /notifications/v3/history for one user with many records
// among many more, against the same server's plain indexed find for that user, in the same run.
// Options: --total <n> (default 1000000) --user-records <n> (10000) --pages <n> (20) --keep <dir>
// (keep the servers' data there and reuse it on the next run). Starts its own redis-server and
// FerretDB on a throwaway PostgreSQL cluster unless REDIS_URL / MONGODB_URI point elsewhere.
import { SignJWT } from 'jose';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { resolveJwtConfig } from '../shared/config/tray-api-config.ts';
import { closeServer, listen } from '../shared/http/listen.ts';
import { createMetricsRegistry } from '../shared/http/metrics-router.ts';
import { createLogger } from '../shared/logging/create-logger.ts';
import { connectMongo } from '../shared/mongo/connect-mongo.ts';
import { createRedis } from '../shared/redis/create-redis.ts';
import { recordStorageKeys } from '../shared/tray/storage-keys.ts';
import { TRAY_RECORDS, type TrayRecordDoc } from '../shared/tray/tray-record.ts';
import { startBanCache } from '../tray-service/api/auth/ban-cache.ts';
import { createTokenVerifier } from '../tray-service/api/auth/create-token-verifier.ts';
import { createTrayApi } from '../tray-service/api/create-tray-api.ts';
import { createRateLimiter } from '../tray-service/api/rate-limit/create-rate-limiter.ts';
import { createMessageRenderer } from '../tray-service/messages/create-message-renderer.ts';
import { apiCollections } from '../tray-service/store/tray-collections.ts';
import { ensureCollections } from '../shared/mongo/ensure-collections.ts';
import { DAY_MS } from '../shared/time/durations.ts';
import { startFerretOnPostgres, startRedis, type LocalServer } from './lib/local-servers.ts';

const { values } = parseArgs({
  options: {
    total: { type: 'string', default: '1000000' },
    'user-records': { type: 'string', default: '10000' },
    pages: { type: 'string', default: '20' },
    keep: { type: 'string' },
  },
});
const TOTAL = Number(values.total);
const USER_RECORDS = Number(values['user-records']);
const PAGES = Number(values.pages);
const PAGE_SIZE = 10;
const BATCH = 10_000;
const OTHER_USERS = 10_000;
const SECRET = 'bench-secret-of-at-least-32-characters';

const say = (line: string) => process.stdout.write(`[bench:api] ${line}\n`);
const dir = values.keep ?? mkdtempSync(join(tmpdir(), 'bench-api-'));
const servers: LocalServer[] = [];
// In reverse: FerretDB before the PostgreSQL it holds connections to.
const stopServers = async () => {
  for (const server of servers.splice(0).reverse()) await server.stop();
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void stopServers().then(() => process.exit(130)));
}

function record(userId: string, i: number, now: number): TrayRecordDoc {
  // Timestamps repeat (every 3 records share one), like bursts of activity in the same millisecond.
  const lastUpdate = now - Math.floor(i / 3) * 1000;
  const verb = i % 7 === 0 ? 'mention' : 'comment';
  const expiresAt = new Date(lastUpdate + 90 * DAY_MS);
  return {
    _id: `${verb}_t${i}_${userId}`,
    userId,
    verb,
    targetId: `t${i}`,
    targetType: 'post',
    targetName: `Post ${i}`,
    lastActionId: `c${i}`,
    feed: { kind: 'community', id: 'c1', name: 'Hiking Club' },
    actors: [
      { userId: 'a', name: 'Ana', imageUrl: 'https://img.example/a.png', at: lastUpdate },
      { userId: 'b', name: 'Ben', at: lastUpdate - 1 },
    ],
    actorIds: ['a', 'b'],
    actorsCount: 2 + (i % 5),
    countFrom: lastUpdate - 5,
    lastUpdate,
    hasRead: i % 4 === 0,
    unreadAt: lastUpdate,
    expiresAt,
    ...recordStorageKeys({ userId, verb, targetId: `t${i}`, lastUpdate, expiresAt }, now),
    version: 1,
  };
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
const ms = (n: number) => `${n.toFixed(2)} ms`;

try {
  const [redisServer, mongo] = await Promise.all([
    process.env.REDIS_URL ? undefined : startRedis({ dir: join(dir, 'redis') }),
    process.env.MONGODB_URI ? undefined : startFerretOnPostgres({ dir }),
  ]);
  const ferret = mongo?.ferret;
  for (const server of [redisServer, mongo?.postgres, ferret]) if (server) servers.push(server);
  const mongoUri = ferret?.url ?? process.env.MONGODB_URI ?? '';
  const { client, db } = await connectMongo(mongoUri, 'bench_api', {
    appName: 'bench-api',
    serverSelectionTimeoutMS: 10_000,
  });
  const records = db.collection<TrayRecordDoc>(TRAY_RECORDS);
  const now = Date.now();
  const user = 'bench-user';

  // Counted once: FerretDB answers even an estimated count by reading every document.
  const existing = await records.estimatedDocumentCount();
  if (existing >= TOTAL) {
    say(`reusing ${existing} records in ${dir}`);
  } else {
    await records.deleteMany({});
    say(
      `seeding ${TOTAL} records (${USER_RECORDS} for ${user}, the rest over ${OTHER_USERS} users) in batches of ${BATCH}`,
    );
    const started = Date.now();
    let inserted = 0;
    while (inserted < TOTAL) {
      const batch: TrayRecordDoc[] = [];
      for (let k = 0; k < BATCH && inserted + k < TOTAL; k++) {
        const n = inserted + k;
        batch.push(n < USER_RECORDS ? record(user, n, now) : record(`u${n % OTHER_USERS}`, n, now));
      }
      await records.insertMany(batch, { ordered: false });
      inserted += batch.length;
      if (inserted % (BATCH * 10) === 0 || inserted === TOTAL) {
        const seconds = (Date.now() - started) / 1000;
        say(`  ${inserted} inserted, ${seconds.toFixed(0)} s, ${(inserted / seconds).toFixed(0)} records/s`);
      }
    }
    say(`seeding took ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  const indexStart = Date.now();
  const { storage } = await ensureCollections(db, apiCollections, {
    logger: createLogger({ name: 'bench', level: 'warn' }),
    postgresUrl: mongo?.postgres.url ?? process.env.FERRETDB_POSTGRESQL_URL,
  });
  say(`storage: ${storage}`);
  say(`indexes ready in ${((Date.now() - indexStart) / 1000).toFixed(1)} s`);

  const redis = createRedis(redisServer?.url ?? process.env.REDIS_URL ?? '');
  const app = createTrayApi({
    logger: createLogger({ name: 'bench', level: 'silent' }),
    db,
    redis,
    registry: createMetricsRegistry('bench', false),
    verifyToken: createTokenVerifier(resolveJwtConfig({ JWT_SECRET: SECRET })),
    // As in production: the hot path consults this in-memory set on every request.
    bans: await startBanCache(redis, {
      prefix: 'bench-bans',
      refreshMs: 500,
      logger: createLogger({ name: 'bench', level: 'silent' }),
    }),
    rateLimiter: createRateLimiter({ redis, points: 1_000_000, windowMs: 60_000, keyPrefix: 'bench-rl' }),
    messages: createMessageRenderer({ defaultLocale: 'en' }),
    settings: { pageSize: PAGE_SIZE, networkId: 'bench', blockApi: true },
  });
  const server = await listen(app, { port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(user)
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(SECRET));

  // A walk through the pages; each API page is followed by the same page read by the driver, so
  // both sides see the same machine load (the machine is shared).
  const api: number[] = [];
  const baseline: number[] = [];
  const readBaseline = async (boundary: number | undefined) => {
    const t0 = performance.now();
    await records
      .find({ userId: user, ...(boundary === undefined ? {} : { lastUpdate: { $lt: boundary } }) })
      .sort({ lastUpdate: -1, _id: -1 })
      .limit(PAGE_SIZE)
      .toArray();
    return performance.now() - t0;
  };
  const readApi = async (boundary: number | undefined) => {
    const t0 = performance.now();
    const res = await fetch(
      `${base}/notifications/v3/history${boundary === undefined ? '' : `?startAfter=${boundary}`}`,
      {
        headers: { authorization: `Bearer ${token}` },
      },
    );
    const body = (await res.json()) as { nextPage: number; data: unknown[] };
    if (res.status !== 200 || body.data.length === 0) throw new Error(`unexpected answer ${res.status}`);
    return { ms: performance.now() - t0, nextPage: body.nextPage === 0 ? undefined : body.nextPage };
  };
  // Warm-up: connections, JIT, server caches, for both sides.
  for (let i = 0; i < 2; i++) {
    await readApi(undefined);
    await readBaseline(undefined);
  }
  let startAfter: number | undefined;
  for (let page = 0; page < PAGES; page++) {
    const answer = await readApi(startAfter);
    api.push(answer.ms);
    baseline.push(await readBaseline(startAfter));
    if ((page + 1) % 5 === 0)
      say(`  page ${page + 1}: API ${ms(answer.ms)}, baseline ${ms(baseline.at(-1) ?? 0)}`);
    startAfter = answer.nextPage;
  }
  const [a, b] = [api.sort((x, y) => x - y), baseline.sort((x, y) => x - y)];
  const ratio50 = quantile(a, 0.5) / quantile(b, 0.5);
  const ratio99 = quantile(a, 0.99) / quantile(b, 0.99);
  say(
    `server: ${ferret ? `FerretDB 1.24 on PostgreSQL, started by this run` : mongoUri.replace(/\/\/[^@]*@/, '//')}`,
  );
  say(
    `records: ${Math.max(existing, TOTAL)} total, ${USER_RECORDS} for the user; ${PAGES} pages of ${PAGE_SIZE}`,
  );
  say(`API GET /notifications/v3/history  p50 ${ms(quantile(a, 0.5))}  p99 ${ms(quantile(a, 0.99))}`);
  say(`baseline indexed find (driver)     p50 ${ms(quantile(b, 0.5))}  p99 ${ms(quantile(b, 0.99))}`);
  say(
    `ratio API / baseline               p50 ${ratio50.toFixed(2)}x  p99 ${ratio99.toFixed(2)}x  (limit 3x)`,
  );
  await closeServer(server);
  redis.disconnect();
  await client.close();
  process.exitCode = ratio50 <= 3 && ratio99 <= 3 ? 0 : 1;
  if (process.exitCode) say('FAIL: the API is slower than 3x the baseline');
} finally {
  await stopServers();
  if (!values.keep) rmSync(dir, { recursive: true, force: true });
}

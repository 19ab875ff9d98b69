// `npm run bench:api`: latency of GET /notifications/v3/history and GET /notifications/v3 (the
// unread count) for users with --user-records records among --total, against the same server's
// plain indexed find and count for that user, in the same run. Two users: `bench-user`, whose
// records are spread over the 90-day retention (a busy member), and `bench-burst`, with as many
// records all from the last 24 hours and none read (the worst case for both calls).
// Options: --total <n> (default 1000000) --user-records <n> (1000) --pages <n> (20) --keep <dir>
// (keep the servers' data there and reuse it on the next run). Starts its own redis-server and
// FerretDB on a throwaway PostgreSQL cluster unless REDIS_URL / MONGODB_URI point elsewhere.
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
import { apiCollections } from '../tray-service/storage/mongodb/tray-collections.ts';
import { createCounter } from '../tray-service/storage/mongodb/create-counter.ts';
import { ensureCollections } from '../tray-service/storage/mongodb/ensure-collections.ts';
import { DAY_MS } from '../shared/time/durations.ts';
import { startFerretOnPostgres, startRedis, type LocalServer } from './lib/local-servers.ts';
import { hs256Token } from './lib/hs256-token.ts';

const { values } = parseArgs({
  options: {
    total: { type: 'string', default: '1000000' },
    'user-records': { type: 'string', default: '1000' },
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
const USER = 'bench-user';
const BURST = 'bench-burst';

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

const RETENTION_MS = 90 * DAY_MS;

/**
 * Record `i` of a user whose `count` records span `spanMs` back from now; every 3 share one
 * timestamp, like bursts of activity in the same millisecond. Records older than `readBefore`
 * are read, as a member who opens the app now and then leaves them.
 */
function record(
  userId: string,
  i: number,
  count: number,
  spanMs: number,
  readBefore: number,
  now: number,
): TrayRecordDoc {
  const lastUpdate = now - 60_000 - Math.floor(((Math.floor(i / 3) * 3) / count) * spanMs);
  const verb = i % 7 === 0 ? 'mention' : 'comment';
  const expiresAt = new Date(lastUpdate + RETENTION_MS);
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
    hasRead: lastUpdate < readBefore,
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

  // Counted once: FerretDB answers even an estimated count by reading every document.
  const existing = await records.estimatedDocumentCount();
  if (existing >= TOTAL) {
    say(`reusing ${existing} records in ${dir}`);
  } else {
    await records.deleteMany({});
    say(
      `seeding ${TOTAL} records (${USER_RECORDS} each for ${USER} and ${BURST}, the rest over ${OTHER_USERS} users) in batches of ${BATCH}`,
    );
    const started = Date.now();
    let inserted = 0;
    const spread = RETENTION_MS - DAY_MS;
    const others = TOTAL - 2 * USER_RECORDS;
    const perOther = Math.max(1, Math.ceil(others / OTHER_USERS));
    while (inserted < TOTAL) {
      const batch: TrayRecordDoc[] = [];
      for (let k = 0; k < BATCH && inserted + k < TOTAL; k++) {
        const n = inserted + k;
        if (n < USER_RECORDS) batch.push(record(USER, n, USER_RECORDS, spread, now - 2 * DAY_MS, now));
        else if (n < 2 * USER_RECORDS) batch.push(record(BURST, n, USER_RECORDS, DAY_MS, 0, now));
        else {
          const m = n - 2 * USER_RECORDS;
          batch.push(record(`u${m % OTHER_USERS}`, n, perOther, spread, now - 2 * DAY_MS, now));
        }
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
  const counter = createCounter(db, {
    storage,
    postgresUrl: mongo?.postgres.url ?? process.env.FERRETDB_POSTGRESQL_URL,
  });
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
    counter,
  });
  const server = await listen(app, { port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const tokenFor = (userId: string) => hs256Token(SECRET, userId);
  const timed = async <T>(work: () => Promise<T>): Promise<[number, T]> => {
    const t0 = performance.now();
    const result = await work();
    return [performance.now() - t0, result];
  };

  /**
   * A walk through one user's pages and repeated unread counts; each API call is followed by the
   * same read through the driver (the plain indexed find or count for the user), so both sides see
   * the same machine load (the machine is shared).
   */
  async function measure(userId: string) {
    const auth = { authorization: `Bearer ${await tokenFor(userId)}` };
    const history = async (boundary: number | undefined) => {
      const res = await fetch(
        `${base}/notifications/v3/history${boundary === undefined ? '' : `?startAfter=${boundary}`}`,
        { headers: auth },
      );
      const body = (await res.json()) as { nextPage: number; data: unknown[] };
      if (res.status !== 200 || body.data.length === 0) throw new Error(`unexpected answer ${res.status}`);
      return body.nextPage === 0 ? undefined : body.nextPage;
    };
    const plainPage = (boundary: number | undefined) =>
      records
        .find({ userId, ...(boundary === undefined ? {} : { lastUpdate: { $lt: boundary } }) })
        .sort({ lastUpdate: -1, _id: -1 })
        .limit(PAGE_SIZE)
        .toArray();
    const unread = async () => {
      const res = await fetch(`${base}/notifications/v3`, { headers: auth });
      if (res.status !== 200) throw new Error(`unexpected answer ${res.status}`);
      return ((await res.json()) as { data: { totalUnreadCount: number } }).data.totalUnreadCount;
    };
    const plainCount = () => records.countDocuments({ userId, hasRead: false });
    // Warm-up: connections, JIT, server caches, for both sides.
    for (let i = 0; i < 2; i++) {
      await history(undefined);
      await plainPage(undefined);
      await unread();
      await plainCount();
    }
    const t = {
      page: [] as number[],
      plainPage: [] as number[],
      unread: [] as number[],
      plainCount: [] as number[],
    };
    let startAfter: number | undefined;
    let unreadCount = 0;
    for (let page = 0; page < PAGES; page++) {
      const [pageMs, next] = await timed(() => history(startAfter));
      t.page.push(pageMs);
      t.plainPage.push((await timed(() => plainPage(startAfter)))[0]);
      const [unreadMs, count] = await timed(unread);
      unreadCount = count;
      t.unread.push(unreadMs);
      t.plainCount.push((await timed(plainCount))[0]);
      startAfter = next;
      if (startAfter === undefined) break;
    }
    for (const list of Object.values(t)) list.sort((x, y) => x - y);
    return { ...t, unreadCount };
  }

  const results = { [USER]: await measure(USER), [BURST]: await measure(BURST) };
  say(
    `server: ${ferret ? `FerretDB 1.24 on PostgreSQL, started by this run` : mongoUri.replace(/\/\/[^@]*@/, '//')}`,
  );
  say(
    `records: ${Math.max(existing, TOTAL)} total; ${USER_RECORDS} for each measured user; up to ${PAGES} pages of ${PAGE_SIZE}`,
  );
  const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const out = [
    row(['user', 'call', 'p50', 'p99', 'plain driver p50', 'plain driver p99', 'p99 ratio', 'target']),
    row(['---', '---', '---', '---', '---', '---', '---', '---']),
  ];
  let failed = false;
  for (const [userId, r] of Object.entries(results)) {
    const pageRatio = quantile(r.page, 0.99) / quantile(r.plainPage, 0.99);
    const pageOk = pageRatio <= 2 && quantile(r.page, 0.99) < 50;
    const unreadOk = quantile(r.unread, 0.99) < 50;
    // The spread user is the target; the burst user is reported, not judged.
    if (userId === USER && !(pageOk && unreadOk)) failed = true;
    out.push(
      row([
        userId,
        'GET /notifications/v3/history',
        ms(quantile(r.page, 0.5)),
        ms(quantile(r.page, 0.99)),
        ms(quantile(r.plainPage, 0.5)),
        ms(quantile(r.plainPage, 0.99)),
        `${pageRatio.toFixed(2)}x`,
        userId === USER ? `${pageOk ? 'ok' : 'MISSED'} (<= 2x, < 50 ms)` : 'reported',
      ]),
      row([
        userId,
        `GET /notifications/v3 (${r.unreadCount} unread)`,
        ms(quantile(r.unread, 0.5)),
        ms(quantile(r.unread, 0.99)),
        ms(quantile(r.plainCount, 0.5)),
        ms(quantile(r.plainCount, 0.99)),
        `${(quantile(r.unread, 0.99) / quantile(r.plainCount, 0.99)).toFixed(2)}x`,
        userId === USER ? `${unreadOk ? 'ok' : 'MISSED'} (< 50 ms)` : 'reported',
      ]),
    );
  }
  process.stdout.write(`${out.join('\n')}\n`);
  process.exitCode = failed ? 1 : 0;
  if (failed) say('FAIL: a target was missed for bench-user');
  await closeServer(server);
  redis.disconnect();
  await counter.close();
  await client.close();
} finally {
  await stopServers();
  if (!values.keep) rmSync(dir, { recursive: true, force: true });
}

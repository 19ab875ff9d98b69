// `npm run bench:worker-mongo`: the MongoDB adapter's counterpart of bench:worker's sections 1-2
// (bench:worker is PostgreSQL-only), on FerretDB 1.24 on a throwaway PostgreSQL and a redis-server
// of its own (scripts/lib/local-servers.ts), through the real bull queue and startWorker, with the
// same envelopes: warm-up comments (untimed), --events grouped comments (a community's target: each
// kept action takes a place in the processing order), --events new-record mentions (a user feed: no
// place), --joins community.didJoin of one user each (a membership batch each: a place), a post to
// --members imported members (new records, then grouped), then the grouped comments redelivered
// (new job ids: every kept action is a duplicate whose first place is read back), then a hot
// group: --commenters earlier commenters of one post stored untimed (copies of one of its actor
// documents), and --hot comments on it by new commenters.
// Each timed phase prints events/s and p50/p99 of a job's time from the worker taking it to its
// completion. Baseline, same server, same run, after the warm-up: --events bare updateOne upserts
// from 8 clients on a scratch collection with tray_records' indexes and record-shaped documents, and
// as many bare insertOne; before the post to --members,
// one bare insertMany of that many record-shaped documents and bare bulkWrites updating each of
// them, the fan-out's floor. At the end it prints how many
// documents tray_target_actions and tray_processing_order hold.
// ROOT=<another checkout> measures that checkout's code with this script (a commit before a change).
// A phase with no completion for 45 s is reported as STALLED, with what PostgreSQL under FerretDB
// and bull were doing, and the run stops.
import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type * as MongoDriver from 'mongodb';
import { workerBenchEnvelopes } from './lib/worker-bench-envelopes.ts';
import { orStop, stopOnSignal } from './lib/stop-on-signal.ts';
import type { FerretOnPostgres, LocalServer } from './lib/local-servers.ts';
import type { TrayStorage } from '../tray-service/storage/port.ts';

// The checkout measured: this one, or ROOT=<another worktree> (to measure a commit before a change).
const ROOT = process.env.ROOT ?? join(import.meta.dirname, '..');
const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '2000' },
    posts: { type: 'string', default: '200' },
    joins: { type: 'string', default: '500' },
    members: { type: 'string', default: '2000' },
    commenters: { type: 'string', default: '5000' },
    hot: { type: 'string', default: '50' },
    concurrency: { type: 'string', default: '64' },
  },
});
const events = Number(args.events);
const posts = Number(args.posts);
const joins = Number(args.joins);
const members = Number(args.members);
const commenters = Number(args.commenters);
const hot = Number(args.hot);
const concurrency = Number(args.concurrency);
for (const [name, value] of Object.entries({ events, posts, joins, members, commenters, hot, concurrency })) {
  // `--events abc` ran with NaN and printed a table of nonsense, exit 0.
  if (!Number.isInteger(value) || value < 1) {
    process.stderr.write(`--${name} expects a whole number >= 1\n`);
    process.exit(2);
  }
}

const req = createRequire(join(ROOT, 'package.json'));
const { MongoClient } = req('mongodb') as typeof MongoDriver;
const { createMetricsRegistry } = await import(join(ROOT, 'shared/http/metrics-router.ts'));
const { createLogger } = await import(join(ROOT, 'shared/logging/create-logger.ts'));
const { createWebhookQueue, webhookJobOptions } = await import(join(ROOT, 'shared/queue/webhook-queue.ts'));
const { openMongoStorage } = await import(join(ROOT, 'tray-service/storage/mongodb/open-mongo-storage.ts'));
const { startWorker } = await import(join(ROOT, 'tray-service/worker/start-worker.ts'));
const { startRedis, startFerretOnPostgres } = await import(join(ROOT, 'scripts/lib/local-servers.ts'));

const say = (line: string) => process.stderr.write(`[bench:worker-mongo] ${line}\n`);
const dir = mkdtempSync(join(tmpdir(), 'bench-worker-mongo-'));
// Before anything starts: a signal during the start-up stops what was started so far (the servers
// still starting included, stopOnSignal).
let started: { stop: () => Promise<void> }[] = [];
const stopServers = stopOnSignal(async () => {
  for (const server of started.reverse()) await server.stop();
  started = [];
}, dir);
const redis = await orStop<LocalServer>(startRedis({ dir: join(dir, 'redis') }), stopServers);
started.push(redis);
// FerretDB is built by `bash scripts/setup.sh` (not by `npm start`'s --product): without it, this
// stops here, and with the Redis started above.
const servers = await orStop<FerretOnPostgres>(
  startFerretOnPostgres({ dir, durability: 'persistent' }),
  stopServers,
);
started.push(servers);
const uri: string = servers.ferret.url;
const dbName = `bench_worker_mongo_${Date.now()}`;
const logger = createLogger({ name: 'bench', level: 'warn' });
const storage = await orStop<TrayStorage>(
  openMongoStorage(uri, dbName, { appName: 'bench-worker-mongo', logger }),
  stopServers,
);
started.push({ stop: () => storage.close() });
const client = await orStop<MongoDriver.MongoClient>(MongoClient.connect(uri), stopServers);
started.push({ stop: () => client.close() });
const db = client.db(dbName);
try {
  const queue = createWebhookQueue({ redis: redis.url, prefix: `bench${Date.now()}` });
  const completed = new Set<string>();
  let pending = new Set<string>();
  let failure: Error | undefined;
  const takenAt = new Map<string, number>();
  let durations: number[] = [];
  queue.on('active', (job: { id: unknown }) => takenAt.set(String(job.id), performance.now()));
  queue.on('completed', (job: { id: unknown }) => {
    const id = String(job.id);
    completed.add(id);
    if (pending.delete(id)) {
      const t = takenAt.get(id);
      if (t !== undefined) durations.push(performance.now() - t);
    }
  });
  queue.on('failed', (job: { id: unknown; attemptsMade: number }, error: Error) => {
    failure = new Error(`job ${String(job.id)} failed (attempt ${job.attemptsMade}): ${error.message}`);
  });
  const worker = await startWorker({
    queue,
    networkId: 'default',
    storage,
    logger,
    registry: createMetricsRegistry('bench', false),
    concurrency,
    purgeIntervalMs: 0,
  });
  const t0 = Date.now() - 3_600_000;
  const iso = (ms: number) => new Date(t0 + ms).toISOString();
  type Envelope = { event: string; data: unknown };
  const jobIdOf = (envelope: Envelope, salt = '') =>
    createHash('sha256')
      .update(salt + JSON.stringify(envelope))
      .digest('hex');
  const q = (sorted: number[], p: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
  type Result = { ms: number; p50: number; p99: number; n: number };
  async function run(label: string, envelopes: Envelope[], salt = ''): Promise<Result> {
    durations = [];
    const started = performance.now();
    const jobs = await queue.addBulk(
      envelopes.map((envelope) => {
        const dedupeKey = jobIdOf(envelope, salt);
        const data = { dedupeKey, webhook: 'bench', receivedAt: iso(0), ...envelope };
        return { data, opts: { ...webhookJobOptions, jobId: dedupeKey } };
      }),
    );
    const ids = jobs.map((job: { id: unknown }) => String(job.id));
    pending = new Set(ids.filter((id: string) => !completed.has(id)));
    let shown = performance.now();
    let progressAt = performance.now();
    let lastLeft = pending.size;
    while (pending.size > 0) {
      if (failure) throw failure;
      if (pending.size !== lastLeft) {
        lastLeft = pending.size;
        progressAt = performance.now();
      }
      if (performance.now() - progressAt > 45_000) {
        const pgc = new (req('pg').Client)({ connectionString: servers.postgres.url });
        await pgc.connect();
        const act = await pgc.query(
          `SELECT state, wait_event_type, wait_event, count(*)::int AS n, max(now() - xact_start)::text AS oldest_xact, left(max(query), 160) AS query
           FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() GROUP BY 1, 2, 3 ORDER BY n DESC`,
        );
        await pgc.end();
        say(
          `STALLED: ${label}: ${pending.size}/${ids.length} left, no completion for 45 s; PostgreSQL under FerretDB:`,
        );
        for (const row of act.rows) say(`  ${JSON.stringify(row)}`);
        const counts = await queue.getJobCounts();
        say(`  bull counts: ${JSON.stringify(counts)}`);
        process.stdout.write(
          `| ${label} | STALLED: ${lastLeft}/${ids.length} not completed, no completion for 45 s |\n`,
        );
        process.kill(process.pid, 'SIGTERM');
        await new Promise(() => undefined);
      }
      if (performance.now() - shown > 5_000) {
        say(`${label}: ${ids.length - pending.size}/${ids.length}`);
        shown = performance.now();
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const ms = performance.now() - started;
    const sorted = [...durations].sort((a, b) => a - b);
    say(`${label}: ${envelopes.length} jobs in ${(ms / 1000).toFixed(2)} s`);
    return { ms, p50: q(sorted, 0.5), p99: q(sorted, 0.99), n: envelopes.length };
  }
  const { comment, mention, post } = workerBenchEnvelopes(iso, posts);
  const join1 = (index: number): Envelope => ({
    event: 'community.didJoin',
    data: {
      community: { communityId: 'c-join' },
      userIds: [`u-joiner${index}`],
      createdAt: iso(4 * 60_000 + index),
    },
  });

  const rate = (r: Result) => Math.round((r.n * 1000) / r.ms);
  const line = (label: string, r: Result) =>
    process.stdout.write(
      `| ${label.padEnd(40)} | ${String(rate(r)).padStart(8)} | ${r.p50.toFixed(1).padStart(8)} | ${r.p99.toFixed(1).padStart(8)} |\n`,
    );
  process.stdout.write(
    `bench:worker-mongo ROOT=${ROOT} events=${events} posts=${posts} joins=${joins} members=${members} commenters=${commenters} hot=${hot} concurrency=${concurrency} node ${process.version}, ${cpus().length} CPUs, MongoDB adapter on FerretDB\n` +
      `| measure (through the bull queue and worker) | events/s | p50 ms | p99 ms |\n`,
  );
  const indexes = Array.from({ length: events }, (_, index) => index);
  await run(
    'warm-up comments',
    indexes.slice(0, posts).map((index) => comment(index, 'u-first', 1)),
  );
  // Baselines: bare single-document writes from 8 clients, same server, same run, after the
  // warm-up (a cold server's first writes are slower). Into a scratch collection with every index
  // of tray_records (copied from the server, as this checkout made them), of documents shaped like
  // a record: the fields those indexes cover, moved as new activity moves them, and a record's size.
  /** A scratch collection with every index tray_records has, so its floors pay what a record pays. */
  const recordIndexed = async (name: string) => {
    const collection = db.collection<{ _id: string }>(name);
    for (const index of await db.collection('tray_records').indexes()) {
      if (index.name === '_id_') continue;
      await collection.createIndex(index.key, { name: index.name });
    }
    return collection;
  };
  const scratch = await recordIndexed('bench_records');
  const recordShaped = (userId: string, at: number) => ({
    userId,
    group: 'comment_p',
    box: 'inbox',
    hasRead: false,
    isSeen: false,
    snoozedUntil: null,
    lastUpdate: at,
    unreadAt: at,
    changedAt: at,
    expiresAt: new Date(at + 90 * 86_400_000),
    verb: 'comment',
    actors: [{ userId: 'a', name: 'A', image: 'x'.repeat(100) }],
    text: 'x'.repeat(200),
  });
  async function bare(write: (index: number) => Promise<unknown>): Promise<number> {
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < events) await write(next++);
      }),
    );
    return performance.now() - started;
  }
  const upsertGrouped = (index: number) =>
    scratch.updateOne(
      { _id: `u-owner|comment_p-${index % posts}` },
      { $inc: { actorsCount: 1 }, $set: recordShaped('u-owner', t0 + index) },
      { upsert: true },
    );
  const bareUpsert = await bare((index) =>
    // FerretDB's upserts are not atomic: two at once on a new _id can both insert; retry the loser.
    upsertGrouped(index).catch(() => upsertGrouped(index)),
  );
  const bareInsert = await bare((index) =>
    scratch.insertOne({ _id: `new-${index}`, ...recordShaped(`u-reader${index}`, t0 + index) }),
  );
  process.stdout.write(
    [
      `| baseline: bare updateOne upsert, 8 clients, /s | ${Math.round((events * 1000) / bareUpsert)} | | |`,
      `| baseline: bare insertOne, 8 clients, /s | ${Math.round((events * 1000) / bareInsert)} | | |`,
    ].join('\n') + '\n',
  );
  line(
    'grouped comments',
    await run(
      'grouped comments',
      indexes.map((index) => comment(index, `u-c${index % 50}`, 2)),
    ),
  );
  line('new-record mentions (user feed)', await run('new-record mentions', indexes.map(mention)));
  line(
    'joins, one user each',
    await run(
      'joins, one user each',
      Array.from({ length: joins }, (_, index) => join1(index)),
    ),
  );
  for (let start = 0; start < members; start += 5_000) {
    const batch = Array.from({ length: Math.min(5_000, members - start) }, (_, offset) => ({
      communityId: 'c-big',
      userId: `c-big-m${start + offset}`,
      since: t0 - 3_600_000,
    }));
    await storage.members.importBatch(batch, t0 - 3_600_000);
  }
  // The fan-out's floor, same server, same run: one document per member written in one call, new
  // (insertMany) and then each grouped into (bulkWrites of updates), as the post's two rows do.
  // Record-shaped documents in a collection with tray_records' indexes, as the records are.
  const fanned = await recordIndexed('bench_fanout');
  const memberDocs = (n: number) =>
    Array.from({ length: members }, (_, index) => ({
      _id: `c-big-m${index}|post_c-big`,
      ...recordShaped(`c-big-m${index}`, t0 + n),
    }));
  say(`bare fan-out: ${members} documents`);
  let started = performance.now();
  await fanned.insertMany(memberDocs(1), { ordered: false });
  const bareFanNewMs = performance.now() - started;
  say(`bare fan-out: inserted in ${(bareFanNewMs / 1000).toFixed(2)} s; updating them`);
  started = performance.now();
  // Single-document updateMany, as the adapter's record writes (cas-update-records.ts): FerretDB
  // 1.24 hangs on a bulkWrite of 50 or more matching updateOne.
  const updates = memberDocs(2).map(({ _id, ...rest }) => ({
    updateMany: { filter: { _id }, update: { $set: rest } },
  }));
  for (let from = 0; from < updates.length; from += 1_000)
    await fanned.bulkWrite(updates.slice(from, from + 1_000), { ordered: false });
  const bareFanGroupedMs = performance.now() - started;
  process.stdout.write(
    [
      `| baseline: bare insertMany of ${members} record-shaped documents, s | ${(bareFanNewMs / 1000).toFixed(2)} | | |`,
      `| baseline: bare bulkWrite of ${members} updates of them, s | ${(bareFanGroupedMs / 1000).toFixed(2)} | | |`,
    ].join('\n') + '\n',
  );
  const bigNew = await run('post to c-big, new records', [post('c-big', 'pb-1', 'c-big-m0', 10)]);
  process.stdout.write(
    `| post to ${members} members, new records, s | ${(bigNew.ms / 1000).toFixed(2)} | | |\n`,
  );
  const bigGrouped = await run('post to c-big, grouped', [post('c-big', 'pb-2', 'c-big-m1', 11)]);
  process.stdout.write(
    `| post to ${members} members, grouped, s | ${(bigGrouped.ms / 1000).toFixed(2)} | | |\n`,
  );
  line(
    'grouped comments redelivered',
    await run(
      'grouped comments redelivered',
      indexes.map((index) => comment(index, `u-c${index % 50}`, 2)),
      'again',
    ),
  );
  // A hot group: the earlier commenters of post p-0, copies of its first comment's actor document.
  const actors = db.collection<{ _id: unknown; actor: { userId: string }; at: number; actionId: string }>(
    'tray_target_actors',
  );
  const first = await actors.findOne({ actionId: 'cm-u-first-0' });
  if (!first) throw new Error('the warm-up comment on p-0 left no actor document');
  for (let start = 0; start < commenters; start += 1_000)
    await actors.insertMany(
      Array.from({ length: Math.min(1_000, commenters - start) }, (_, offset) => {
        const n = start + offset;
        return {
          ...first,
          _id: `bench-earlier-${n}`,
          actor: { ...first.actor, userId: `u-earlier${n}` },
          at: first.at - 1 - n,
          actionId: `cm-earlier-${n}`,
        };
      }),
    );
  say(`stored ${commenters} earlier commenters of p-0`);
  line(
    `comments, post of ${commenters} commenters`,
    await run(
      `comments on a post of ${commenters} commenters`,
      Array.from({ length: hot }, (_, index) => comment(index * posts, `u-hot${index}`, 20)),
    ),
  );
  await worker.close();
  const keptActions = await db.collection('tray_target_actions').estimatedDocumentCount();
  const orderBlocks = (await db.listCollections({ name: 'tray_processing_order' }).toArray()).length
    ? await db.collection('tray_processing_order').countDocuments()
    : 0;

  process.stdout.write(`tray_target_actions=${keptActions} tray_processing_order blocks=${orderBlocks}\n`);
  await queue.close();
} finally {
  await client
    .db(dbName)
    .dropDatabase()
    .catch(() => undefined);
  // The client, the storage, then the servers (in reverse of their start).
  await stopServers();
}
process.exit(0);

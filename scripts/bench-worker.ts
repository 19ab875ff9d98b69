// `npm run bench:worker`: throughput of the tray worker and the database commands it spends.
//   1. a stream of comment events, one recipient each (new records, then grouped into them),
//      through the real bull queue: events/s (target: 300 or more grouped) and commands per event
//      (target: at most 6);
//   2. one post fanned out to a community of --members (default 10,000): time (target: 15 s or
//      less grouped) and commands (target: at most 30), first into new records, then grouped into
//      the existing ones, then again after --posters (default 1,000) distinct members have posted
//      there, with the size of a member's record; then --burst (default 20) posts there at once,
//      against the time of one.
// Commands are counted with the driver's command monitoring (`commandStarted`). Starts its own
// redis-server and FerretDB on a throwaway PostgreSQL cluster in a temp dir unless REDIS_URL /
// MONGODB_URI point elsewhere.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BSON, MongoClient } from 'mongodb';
import { createMetricsRegistry } from '../shared/http/metrics-router.ts';
import { createLogger } from '../shared/logging/create-logger.ts';
import { createWebhookQueue, webhookJobOptions, type WebhookJobData } from '../shared/queue/webhook-queue.ts';
import { DAY_MS } from '../shared/time/durations.ts';
import { dayOf, recordGroup } from '../shared/tray/storage-keys.ts';
import {
  MEMBERSHIPS,
  membershipId,
  TRAY_RECORDS,
  TRAY_TARGET_ACTORS,
  type MembershipDoc,
  type TrayRecordDoc,
} from '../shared/tray/tray-record.ts';
import type { TargetActorDoc } from '../tray-service/storage/mongodb/target-actors-store.ts';
import { startWorker } from '../tray-service/worker/start-worker.ts';
import { startFerretOnPostgres, startRedis, type LocalServer } from './lib/local-servers.ts';

const { values: args } = parseArgs({
  options: {
    comments: { type: 'string', default: '1000' },
    members: { type: 'string', default: '10000' },
    posters: { type: 'string', default: '1000' },
    burst: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '64' },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  process.stdout.write(
    'usage: npm run bench:worker -- [--comments 1000] [--members 10000] [--posters 1000] [--burst 20] [--concurrency 64]\n',
  );
  process.exit(0);
}
const comments = Number(args.comments);
const members = Number(args.members);
const concurrency = Number(args.concurrency);
const posters = Number(args.posters);
const burst = Number(args.burst);
for (const [name, value] of Object.entries({ comments, members, concurrency, posters, burst })) {
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} expects a whole number >= 1`);
}

const dir = mkdtempSync(join(tmpdir(), 'bench-worker-'));
const servers: LocalServer[] = [];
const cleanup = async () => {
  // In reverse: FerretDB before the PostgreSQL it holds connections to.
  for (const server of servers.splice(0).reverse()) await server.stop();
  rmSync(dir, { recursive: true, force: true });
};
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.on(signal, () => void cleanup().then(() => process.exit(130)));

try {
  const redisUrl = process.env.REDIS_URL ?? (await startRedis({ dir: join(dir, 'redis') }).then(keep)).url;
  const mongo = process.env.MONGODB_URI ? undefined : await startFerretOnPostgres({ dir });
  if (mongo) [mongo.postgres, mongo.ferret].forEach(keep);
  const mongoUri = mongo?.ferret.url ?? process.env.MONGODB_URI ?? '';
  const client = new MongoClient(mongoUri, { monitorCommands: true });
  let commands = 0;
  client.on('commandStarted', () => commands++);
  await client.connect();
  const db = client.db(`bench_worker_${Date.now()}`);
  const queue = createWebhookQueue({ redis: redisUrl, prefix: `bench${Date.now()}` });
  // Completions counted from the worker's own events: a `job.finished()` per job adds a listener
  // per job that every completion then calls (quadratic, in the process being measured).
  const completed = new Set<string>();
  let failure: Error | undefined;
  queue.on('completed', (job: { id: unknown }) => completed.add(String(job.id)));
  queue.on('failed', (job: { id: unknown; attemptsMade: number }, error: Error) => {
    failure = new Error(`job ${String(job.id)} failed (attempt ${job.attemptsMade}): ${error.message}`);
  });
  const worker = await startWorker({
    queue,
    db,
    logger: createLogger({ name: 'bench', level: 'warn' }),
    registry: createMetricsRegistry('bench', false),
    concurrency,
    purgeIntervalMs: 0,
    postgresUrl: mongo?.postgres.url ?? process.env.FERRETDB_POSTGRESQL_URL,
  });
  const t0 = Date.parse('2026-11-20T10:00:00.000Z');
  const iso = (ms: number) => new Date(t0 + ms).toISOString();

  async function run(envelopes: { event: string; data: Record<string, unknown> }[]) {
    commands = 0;
    const started = performance.now();
    const jobs = await queue.addBulk(
      envelopes.map((envelope) => {
        const dedupeKey = createHash('sha256').update(JSON.stringify(envelope)).digest('hex');
        const data: WebhookJobData = { dedupeKey, webhook: 'bench', receivedAt: iso(0), ...envelope };
        return { data, opts: { ...webhookJobOptions, jobId: dedupeKey } };
      }),
    );
    const ids = jobs.map((job) => String(job.id));
    while (!ids.every((id) => completed.has(id))) {
      if (failure) throw failure;
      await new Promise((done) => setTimeout(done, 5));
    }
    // Commands counted by the monitored client are the worker's only (bull talks to Redis).
    const result = { ms: performance.now() - started, commands };
    process.stderr.write(
      `[bench] ${envelopes.length} jobs: ${(result.ms / 1000).toFixed(1)} s, ${commands} commands\n`,
    );
    return result;
  }

  const comment = (index: number, author: string, minute: number) => ({
    event: 'comment.didCreate',
    data: {
      comment: {
        commentId: `cm-${author}-${index}`,
        userId: author,
        referenceType: 'post',
        referenceId: `p-${index}`,
        parentId: null,
        segmentNumber: 1,
        createdAt: iso(minute * 60_000 + index),
      },
      post: {
        postId: `p-${index}`,
        postedUserId: `u-owner${index}`,
        targetType: 'community',
        targetId: 'c-bench',
      },
      community: { communityId: 'c-bench', displayName: 'Bench Club' },
      users: [{ userId: author, displayName: author }],
    },
  });
  const post = (postId: string, author: string, minute: number) => ({
    event: 'post.didCreate',
    data: {
      post: {
        postId,
        postedUserId: author,
        targetType: 'community',
        targetId: 'c-big',
        text: 'hello',
        createdAt: iso(minute * 60_000),
      },
      community: { communityId: 'c-big', displayName: 'Big Club' },
      users: [{ userId: author, displayName: author }],
    },
  });

  const ids = Array.from({ length: comments }, (_, index) => index);
  const fresh = await run(ids.map((index) => comment(index, 'u-cid', 1)));
  const grouped = await run(ids.map((index) => comment(index, 'u-dee', 2)));

  const since = t0 - 3_600_000;
  await db.collection<MembershipDoc>(MEMBERSHIPS).insertMany(
    Array.from({ length: members }, (_, index) => ({
      _id: membershipId('c-big', `u-m${index}`),
      communityId: 'c-big',
      userId: `u-m${index}`,
      active: true,
      since,
      updatedAt: since,
    })),
  );
  const fanOut = await run([post('p-big-1', 'u-m0', 3)]);
  const fanOutGrouped = await run([post('p-big-2', 'u-m1', 4)]);
  // What --posters distinct members' earlier posts leave in the group's actors (one entry each),
  // written directly (replaying that many fan-outs would take the bench hours); one post then
  // brings the members' records to the state those fan-outs would have left, untimed, and the
  // next post is the one measured.
  const group = recordGroup('post', 'c-big');
  await db.collection<TargetActorDoc>(TRAY_TARGET_ACTORS).insertMany(
    Array.from({ length: posters }, (_, index) => {
      const userId = `u-m${2 + index}`;
      const at = t0 + 4 * 60_000 + 1 + index;
      const expiresAt = new Date(at + 90 * DAY_MS);
      return {
        _id: JSON.stringify([group, userId, `p-old-${index}`]),
        group,
        groupActor: JSON.stringify([group, userId]),
        actorId: userId,
        actor: { userId, name: userId },
        at,
        actionId: `p-old-${index}`,
        expiresAt,
        expiresDay: dayOf(expiresAt),
      };
    }),
  );
  const settle = await run([post('p-big-3', `u-m${members - 1}`, 5)]);
  const fanOutBusy = await run([post('p-big-4', `u-m${members - 2}`, 6)]);
  // A busy community: --burst posts queued at once. The first goes alone; the ones that wait
  // while it runs go out together in the next fan-out (each member's record written once for them).
  const burstPosts = await run(
    Array.from({ length: burst }, (_, index) => post(`p-burst-${index}`, `u-m${3 + index}`, 7)),
  );
  const sample = await db
    .collection<TrayRecordDoc>(TRAY_RECORDS)
    .findOne({ _id: `post_c-big_u-m${members - 2}` });
  const recordBytes = sample ? BSON.calculateObjectSize(sample) : 0;
  await worker.close();

  // Baselines on the same server in the same run: the plain driver writes the worker cannot do
  // without (an event insert and a record insert per comment, 4 at a time; one insertMany and one
  // updateMany of member-record-sized documents), so the ratios show the engine's own cost.
  const scratch = db.collection<{ _id: string; n: number; pad: string }>('bench_baseline');
  const pad = 'x'.repeat(600);
  const baseStarted = performance.now();
  for (let start = 0; start < comments; start += concurrency) {
    await Promise.all(
      ids.slice(start, start + concurrency).map(async (index) => {
        await scratch.insertOne({ _id: `e-${index}`, n: index, pad });
        await scratch.insertOne({ _id: `r-${index}`, n: index, pad });
      }),
    );
  }
  const baseComments = { ms: performance.now() - baseStarted };
  await scratch.deleteMany({});
  let mark = performance.now();
  await scratch.insertMany(Array.from({ length: members }, (_, index) => ({ _id: `m-${index}`, n: 0, pad })));
  const baseInsert = { ms: performance.now() - mark };
  mark = performance.now();
  await scratch.updateMany({}, { $set: { n: 1 } });
  const baseUpdate = { ms: performance.now() - mark };
  await client.close();

  const line = (label: string, value: string, target = '') =>
    `| ${label.padEnd(58)} | ${value.padStart(12)} | ${target.padEnd(8)} |`;
  const perEvent = (r: { commands: number }) => (r.commands / comments).toFixed(2);
  const rate = (r: { ms: number }) => ((comments * 1000) / r.ms).toFixed(0);
  const verdict = (value: number, target: number) => `${value <= target ? 'ok' : 'OVER'} <= ${target}`;
  const out = [
    `baselines (plain driver, same server, same run): ${rate(baseComments)} comment-equivalents/s; insertMany ${members} docs ${(baseInsert.ms / 1000).toFixed(2)} s; updateMany ${members} docs ${(baseUpdate.ms / 1000).toFixed(2)} s`,
    `ratios: comments new ${(Number(rate(fresh)) / Number(rate(baseComments))).toFixed(2)}x and grouped ${(Number(rate(grouped)) / Number(rate(baseComments))).toFixed(2)}x the baseline rate; fan-out new ${(fanOut.ms / baseInsert.ms).toFixed(2)}x and grouped ${(fanOutGrouped.ms / baseUpdate.ms).toFixed(2)}x the baseline time`,
    `bench:worker  comments=${comments} members=${members} concurrency=${concurrency}  node ${process.version}, ${cpus().length} CPUs, MongoDB server: ${process.env.MONGODB_URI ? 'MONGODB_URI' : 'FerretDB 1.24 on PostgreSQL'}`,
    line('measure', 'result', 'target'),
    line('---', '---', '---'),
    line(`comment events, new record each: events/s`, rate(fresh)),
    line(
      `comment events, new record each: commands/event`,
      perEvent(fresh),
      verdict(fresh.commands / comments, 6),
    ),
    line(
      `comment events, grouped into existing record: events/s`,
      rate(grouped),
      `${Number(rate(grouped)) >= 300 ? 'ok' : 'UNDER'} >= 300`,
    ),
    line(
      `comment events, grouped into existing record: commands/event`,
      perEvent(grouped),
      verdict(grouped.commands / comments, 6),
    ),
    line(`post to ${members} members, new records: time (s)`, (fanOut.ms / 1000).toFixed(2)),
    line(
      `post to ${members} members, new records: commands`,
      String(fanOut.commands),
      verdict(fanOut.commands, 30),
    ),
    line(
      `post to ${members} members, grouped into records: time (s)`,
      (fanOutGrouped.ms / 1000).toFixed(2),
      verdict(fanOutGrouped.ms / 1000, 15),
    ),
    line(
      `post to ${members} members, grouped into records: commands`,
      String(fanOutGrouped.commands),
      verdict(fanOutGrouped.commands, 30),
    ),
    line(
      `same, after ${posters} distinct members posted there: time (s)`,
      (fanOutBusy.ms / 1000).toFixed(2),
      verdict(fanOutBusy.ms / 1000, 15),
    ),
    line(
      `${burst} posts there at once: time (s), x one post's`,
      `${(burstPosts.ms / 1000).toFixed(2)}, ${(burstPosts.ms / fanOutBusy.ms).toFixed(2)}x`,
    ),
    line(`same: a member's record (actorsCount ${sample?.actorsCount ?? '?'}), bytes`, String(recordBytes)),
    line(`(untimed settling post after the posters appeared at once: s)`, (settle.ms / 1000).toFixed(2)),
  ];
  process.stdout.write(`${out.join('\n')}\n`);
} finally {
  await cleanup();
}
// Bull's reconnecting Redis clients must not keep the process alive (or log) after the servers stop.
process.exit(0);

function keep(server: LocalServer): LocalServer {
  servers.push(server);
  return server;
}

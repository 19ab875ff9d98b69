import type Bull from 'bull';
import { expect } from 'chai';
import { createMetricsRegistry } from '../../../../shared/http/metrics-router.ts';
import { createLogger } from '../../../../shared/logging/create-logger.ts';
import {
  createWebhookQueue,
  webhookJobOptions,
  type WebhookJobData,
} from '../../../../shared/queue/webhook-queue.ts';
import type { TrayRecord } from '../../../../tray-service/domain/tray-record.ts';
import type { TrayStorage } from '../../../../tray-service/storage/port.ts';
import { openPostgresStorage } from '../../../../tray-service/storage/postgres/open-postgres-storage.ts';
import { startWorker, type RunningWorker } from '../../../../tray-service/worker/start-worker.ts';
import { referenceTray, type ModelRecord } from '../../../reliability/support/reference-tray-model.ts';
import { useQueuePrefix } from '../../../support/suite-resources.ts';
import { testStack } from '../../../support/test-stack.ts';
import { waitFor } from '../../../support/wait-for.ts';
import { usePostgres } from '../../../support/use-postgres.ts';
import {
  BASE_TIME,
  commentEvent,
  membershipEvent,
  minute,
  postEvent,
  type TestEnvelope,
} from '../../worker/event-builder.ts';
import { jobDataOf, readAll } from '../../worker/worker-harness.ts';

const COMMUNITY = 'c-load';
const MEMBERS = 10_000;
const POSTS = 20;
const COMMENTS_PER_POST = 3;
const IMPORT_BATCH = 2_000;
/** Members whose whole tray is compared with the model (plus every comment recipient). */
const SAMPLE_EVERY = MEMBERS / 200;

const memberIds = Array.from({ length: MEMBERS }, (_, index) => `u-m${String(index).padStart(5, '0')}`);
const member = (index: number) => memberIds[index % MEMBERS]!;
const ownerOf = (post: number) => member(post * 487 + 11);

/** 20 posts to the community, each by a member, at distinct minutes. */
const posts: TestEnvelope[] = Array.from({ length: POSTS }, (_, post) =>
  postEvent({
    postId: `p-load-${post}`,
    author: ownerOf(post),
    communityId: COMMUNITY,
    createdAt: minute(post),
  }),
);

/**
 * Comments on those posts by other members; every third one mentions the post's owner, so one
 * job writes two records of one user (the owner's comment and mention), the case where a job and a
 * mark-all-read of that user both touch several rows of the same tray.
 */
const comments: TestEnvelope[] = Array.from({ length: POSTS * COMMENTS_PER_POST }, (_, index) => {
  const post = index % POSTS;
  return commentEvent({
    postId: `p-load-${post}`,
    postOwner: ownerOf(post),
    communityId: COMMUNITY,
    commentId: `cm-load-${index}`,
    author: member(index * 613 + 5),
    createdAt: minute(post + 0.5 + index / 1_000),
    segmentNumber: index,
    ...(index % 3 === 0 ? { mentions: [ownerOf(post)] } : {}),
  });
});

const commentRecipients = [...new Set(Array.from({ length: POSTS }, (_, post) => ownerOf(post)))];
const sampled = [
  ...new Set([...memberIds.filter((_, index) => index % SAMPLE_EVERY === 0), ...commentRecipients]),
];
/** Members whose tray is marked read while the jobs run: every other sampled member and every post owner. */
const marked = [...new Set([...sampled.filter((_, index) => index % 2 === 0), ...commentRecipients])];

/** What a mark-all-read or a write changes together: the fields a later write moves. */
const contentOf = (record: TrayRecord) =>
  JSON.stringify([
    record.lastActionId,
    record.lastUpdate,
    record.actorsCount,
    record.actors.map((actor) => actor.userId),
  ]);

const compared = (record: TrayRecord | ModelRecord) => ({
  key: record.key,
  lastActionId: record.lastActionId,
  lastUpdate: record.lastUpdate,
  actorsCount: record.actorsCount,
  actorIds: 'actors' in record ? record.actors.map((actor) => actor.userId) : record.actorIds,
  actorNames: 'actors' in record ? record.actors.map((actor) => actor.name) : record.actorNames,
});

const byKey = (a: { key: string }, b: { key: string }) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** Runs `step` again and again, a few ms apart, until `stop` says so. */
async function repeat(stop: () => boolean, step: () => Promise<void>): Promise<void> {
  while (!stop()) {
    await step();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

// docs/storage.md#lock-order-and-the-purge: writers lock their record groups and rows in
// one order, the purge never waits for a row a writer holds, and no race ends in a deadlock.
describe('PostgreSQL adapter under load through two workers', () => {
  const postgres = usePostgres();
  const prefix = useQueuePrefix();
  const opened: TrayStorage[] = [];
  const open = async (name: string) => {
    const storage = await openPostgresStorage(postgres.url, {
      poolSize: 4,
      statementTimeoutMs: 30_000,
      applicationName: name,
    });
    opened.push(storage);
    return storage;
  };
  const queues: Bull.Queue<WebhookJobData>[] = [];
  const workers: RunningWorker[] = [];
  const closeAll = async () => {
    for (const worker of workers.splice(0)) await worker.close();
    for (const queue of queues.splice(0)) await queue.close();
    for (const storage of opened.splice(0)) await storage.close();
  };
  after(async function () {
    this.timeout(30_000);
    await closeAll();
  });

  const deadlocks = async () => {
    const result = await postgres.pool.query<{ deadlocks: string }>(
      'SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()',
    );
    return Number(result.rows[0]?.deadlocks ?? 0);
  };

  /** A statement of these instances is waiting for a lock. */
  const waitingOnLock = async (applicationName: string, query: string) => {
    const waiting = await postgres.pool.query(
      `SELECT 1 FROM pg_stat_activity
       WHERE datname = current_database() AND application_name LIKE $1 AND query LIKE $2
         AND wait_event_type = 'Lock'`,
      [applicationName, query],
    );
    return (waiting.rowCount ?? 0) > 0;
  };

  describe('20 posts to a 10,000-member community at once, with comments, marks and purges in flight', () => {
    const failures: string[] = [];
    const attempts: number[] = [];
    const marks = new Map<string, TrayRecord[]>();
    let api: TrayStorage;
    let deadlocksBefore = 0;
    let deadlocksAfter = 0;
    let purges = 0;
    let purged = 0;
    const purgeFailures: string[] = [];

    before(async function () {
      this.timeout(120_000);
      api = await open('api');
      for (let start = 0; start < MEMBERS; start += IMPORT_BATCH) {
        await api.members.importBatch(
          memberIds
            .slice(start, start + IMPORT_BATCH)
            .map((userId) => ({ communityId: COMMUNITY, userId, since: BASE_TIME - 3_600_000 })),
          BASE_TIME - 3_600_000,
        );
      }
      const redis = testStack().redisUrl;
      const logger = createLogger({ name: 'test', level: 'silent' });
      for (const name of ['worker-a', 'worker-b']) {
        const queue = createWebhookQueue({ redis, prefix });
        queues.push(queue);
        // Each instance hears of its own attempts: a failed one is retried (webhookJobOptions), so
        // only these events show it.
        queue.on('failed', (job, error) => failures.push(`${name} ${job.id}: ${error.message}`));
        queue.on('completed', (job) => attempts.push(job.attemptsMade));
        workers.push(
          await startWorker({
            queue,
            networkId: 'default',
            storage: await open(name),
            logger,
            registry: createMetricsRegistry(name.replace('-', '_'), false),
            purgeIntervalMs: 0,
          }),
        );
      }
      const purgers = [await open('purge-a'), await open('purge-b')];
      const producer = createWebhookQueue({ redis, prefix });
      queues.push(producer);
      producer.setMaxListeners(1_000);

      // Records that expired (a community quiet for longer than the retention, and other
      // communities'): the purges delete them while the first fan-out upserts the same rows. They
      // lie in reverse key order and expire in that order, so a purge deleting in the order it
      // finds them meets the fan-out (key order) crosswise; the other records make it last.
      await postgres.pool.query(
        `INSERT INTO tray_records (user_id, key, verb, target_id, target_type, target_name,
           last_action_id, feed, actors, actors_count, count_from, last_update, unread_at,
           changed_at, expires_at)
         SELECT u, tray_record_key('post', t, u), 'post', t, 'community', 'Old', 'p-old',
           '{}'::jsonb, '[]'::jsonb, 1, 1, 1, 1, 1, n
         FROM unnest($1::text[]) WITH ORDINALITY AS m(u, n)
         CROSS JOIN unnest(ARRAY['c-old-1', 'c-old-2', 'c-old-3', 'c-old-4', $2]) AS c(t)
         ORDER BY n, t = $2`,
        [[...memberIds].reverse(), COMMUNITY],
      );
      deadlocksBefore = await deadlocks();

      // A slow transaction (an operator's, say) holds the record of the member in the middle, so
      // the first fan-out stops there having written the members before it, and the purges run
      // into it from the other end; then it lets go.
      const slow = await postgres.pool.connect();
      await slow.query('BEGIN');
      await slow.query(
        `SELECT 1 FROM tray_records WHERE user_id = $1 AND key = tray_record_key('post', $2, $1) FOR UPDATE`,
        [member(MEMBERS / 2), COMMUNITY],
      );
      const jobs = await Promise.all(
        [...posts, ...comments].map((envelope) => {
          const data = jobDataOf(envelope);
          return producer.add(data, { ...webhookJobOptions, jobId: data.dedupeKey });
        }),
      );
      let done = false;
      const stop = () => done;
      const loops = [
        ...[0, 1].map(() =>
          repeat(stop, async () => {
            const userId = marked[Math.floor(Math.random() * marked.length)]!;
            const changed = await api.records.markAllRead(userId, Date.now());
            marks.set(userId, [...(marks.get(userId) ?? []), ...changed]);
          }),
        ),
      ];
      try {
        await waitFor(
          () => waitingOnLock('worker-%', '%tray: grouped upsert, community fan-out%'),
          30_000,
          'a fan-out waiting',
        );
        loops.push(
          ...purgers.map((storage) =>
            repeat(stop, async () => {
              // A failed purge is only logged by the worker and tried at the next interval: noted here.
              await storage.purgeExpired(new Date()).then(
                (done) => {
                  purges += 1;
                  purged += done.records;
                },
                (error: Error) => purgeFailures.push(error.message),
              );
            }),
          ),
        );
        // Until the purges went past the fan-out's rows, or stopped at them.
        await waitFor(
          async () => purges >= 2 || (await waitingOnLock('purge-%', '%DELETE FROM tray_records%')),
          30_000,
          'the purges meeting the fan-out',
        );
      } finally {
        await slow.query('COMMIT');
        slow.release();
      }
      try {
        // bull subscribes to its global events on the first finished(); the rest then share it.
        await jobs[0]?.finished();
        await Promise.all(jobs.slice(1).map((job) => job.finished()));
      } finally {
        done = true;
        await Promise.all(loops);
      }
      // A backend reports its deadlocks to the statistics when it ends: close every pool first.
      const storages = opened.filter((storage) => storage !== api);
      for (const worker of workers.splice(0)) await worker.close();
      for (const storage of storages) await storage.close();
      opened.splice(0, opened.length, api);
      deadlocksAfter = await deadlocks();
    });

    it('purged expired records alongside the jobs, every purge succeeding', () => {
      expect(purgeFailures).to.deep.equal([]);
      expect(purged).to.be.greaterThan(MEMBERS);
    });

    it('fails no job attempt', () => {
      expect(failures).to.deep.equal([]);
      // bull counts failed attempts only: a job completed at its first attempt has made none.
      expect(attempts).to.have.length(posts.length + comments.length);
      expect(new Set(attempts)).to.deep.equal(new Set([0]));
    });

    it('counts no deadlock in PostgreSQL', () => {
      expect(deadlocksAfter - deadlocksBefore).to.equal(0);
    });

    it("gives every sampled user the reference model's records", async function () {
      this.timeout(60_000);
      const model = referenceTray([
        membershipEvent('join', memberIds, COMMUNITY, new Date(BASE_TIME - 3_600_000).toISOString()),
        ...posts,
        ...comments,
      ]);
      const expected = new Map<string, ModelRecord[]>();
      for (const record of model.values())
        expected.set(record.userId, [...(expected.get(record.userId) ?? []), record]);
      const now = Date.now();
      for (const userId of sampled) {
        const actual = (await readAll(api, userId, now)).map(compared);
        expect(actual, userId).to.deep.equal((expected.get(userId) ?? []).map(compared).sort(byKey));
      }
    });

    it('keeps a record read exactly when a mark-all-read saw it as it is now', async function () {
      this.timeout(60_000);
      const now = Date.now();
      for (const userId of sampled) {
        const seen = new Set((marks.get(userId) ?? []).map((record) => `${record.key} ${contentOf(record)}`));
        for (const record of await readAll(api, userId, now)) {
          expect(record.hasRead, `${record.key} read`).to.equal(
            seen.has(`${record.key} ${contentOf(record)}`),
          );
        }
      }
    });
  });
});

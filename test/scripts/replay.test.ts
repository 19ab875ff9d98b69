import type Bull from 'bull';
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startRedis, type LocalServer } from '../../scripts/lib/local-servers.ts';
import { openSpool } from '../../receiver/spool/open-spool.ts';
import { dedupeMarkKey, enqueueOnce } from '../../receiver/store/enqueue-once.ts';
import {
  createWebhookQueue,
  encodeWebhookJob,
  type WebhookJobData,
} from '../../shared/queue/webhook-queue.ts';
import { cleanEnv, runCommand, runScript } from '../support/run-script.ts';
import { uniqueName, useQueuePrefix } from '../support/suite-resources.ts';
import { testStack } from '../support/test-stack.ts';
import { useRedisCluster } from '../support/use-redis-cluster.ts';
import { waitFor } from '../support/wait-for.ts';

// Odd ones from a Standard Webhooks sender: a replay keeps the scheme, which the tray goes by.
const job = (n: number): WebhookJobData => ({
  dedupeKey: createHash('sha256').update(`event-${n}`).digest('hex'),
  webhook: 'main',
  scheme: n % 2 === 0 ? 'platform' : 'standard-webhooks',
  receivedAt: '2026-11-20T10:00:00.000Z',
  event: 'post.didCreate',
  data: { n },
});

/**
 * Makes `queue` a worker that takes no job (paused before it starts), so what a replay queues stays
 * for the test to read; bull names its connection as it names any worker's, which the replay reads.
 */
async function idleWorker(queue: Bull.Queue<WebhookJobData>): Promise<void> {
  await queue.pause(true);
  void queue.process(async () => undefined);
  await waitFor(async () => (await queue.getWorkers()).length > 0, 10_000, 'the worker to be named');
}

/** A spool segment in `dir` holding `jobs`. */
function segmentWith(dir: string, ...jobs: WebhookJobData[]): string {
  const file = join(dir, 'segment-000000000001.ndjson');
  writeFileSync(file, jobs.map((j) => `${JSON.stringify(j)}\n`).join(''));
  return file;
}

/** Redis list/set membership of a job id, to prove no id is queued twice. */
async function occurrences(queue: Bull.Queue, ids: string[]) {
  const waiting = (await queue.getWaiting(0, -1)).map((j) => String(j.id));
  return ids.map((id) => waiting.filter((w) => w === id).length);
}

describe('scripts/replay.ts', function () {
  this.timeout(60_000);

  describe('failed', () => {
    const prefix = useQueuePrefix();
    let queue: Bull.Queue<WebhookJobData>;
    let env: NodeJS.ProcessEnv;
    let ids: string[];

    before(async () => {
      env = cleanEnv({ REDIS_URL: testStack().redisUrl, QUEUE_PREFIX: prefix });
      // Five jobs fail for good in a worker, the way a poisoned event ends in the dead letter.
      const worker = createWebhookQueue({ redis: testStack().redisUrl, prefix });
      const failed = new Promise<void>((resolve) => {
        let count = 0;
        worker.on('failed', () => (count += 1) === 5 && resolve());
      });
      void worker.process(async () => {
        throw new Error('MongoDB was down');
      });
      for (let n = 0; n < 5; n += 1) await worker.add(job(n), { jobId: job(n).dedupeKey, attempts: 1 });
      await failed;
      await worker.close();
      queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
      ids = (await queue.getFailed()).map((j) => String(j.id));
      expect(ids).to.have.lengthOf(5);
    });
    after(() => queue.close());

    it('--dry-run counts the failed jobs and moves nothing', async () => {
      const result = await runScript('scripts/replay.ts', ['failed', '--dry-run'], env);
      expect(result.code).to.equal(0);
      // Naming the Redis it read: without REDIS_URL a replay reads a local default, perhaps not the one meant.
      expect(result.stdout).to.equal(
        `5 failed jobs in ${prefix}:webhook-events would be moved back to waiting (Redis ${new URL(testStack().redisUrl).host})\n`,
      );
      expect(await queue.getFailedCount()).to.equal(5);
    });

    // npm takes every option before `--` as its own setting and hands the script the rest: without
    // the check, `--dry-run` vanished and the jobs were moved for real.
    it('refuses an option npm took for itself (typed before `--`) and moves nothing', async () => {
      const result = await runCommand('npm', ['run', '-s', 'replay', 'failed', '--dry-run'], env);
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include('--dry-run');
      expect(result.stderr).to.include('npm run replay -- failed --dry-run');
      expect(await queue.getFailedCount()).to.equal(5);
    });

    it('moves every failed job back to waiting exactly once, even with two runs at the same time', async () => {
      const [a, b] = await Promise.all([
        runScript('scripts/replay.ts', ['failed'], env),
        runScript('scripts/replay.ts', ['failed'], env),
      ]);
      expect([a.code, b.code]).to.deep.equal([0, 0]);
      const moved = [a, b].map((r) => Number(/(\d+) failed jobs moved back/.exec(r.stdout)?.[1]));
      expect(moved[0]! + moved[1]!).to.equal(5);
      expect(await queue.getFailedCount()).to.equal(0);
      expect(await occurrences(queue, ids)).to.deep.equal([1, 1, 1, 1, 1]);
    });

    it('a later run finds nothing to move', async () => {
      const result = await runScript('scripts/replay.ts', ['failed'], env);
      expect(result.code).to.equal(0);
      expect(result.stdout).to.include(
        `${prefix}:webhook-events: 0 failed jobs moved back to waiting, 0 skipped`,
      );
      expect(result.stdout).to.include(`(Redis ${new URL(testStack().redisUrl).host})`);
      expect(await occurrences(queue, ids)).to.deep.equal([1, 1, 1, 1, 1]);
    });
  });

  describe('failed --limit', () => {
    const prefix = useQueuePrefix();
    it('moves the oldest failures first: those nearest to leaving the failed set', async () => {
      const worker = createWebhookQueue({ redis: testStack().redisUrl, prefix });
      let count = 0;
      const failed = new Promise<void>((resolve) => {
        worker.on('failed', () => (count += 1) === 3 && resolve());
      });
      void worker.process(async () => {
        throw new Error('MongoDB was down');
      });
      // One after another, so each fails at its own time.
      for (let n = 0; n < 3; n += 1) {
        const each = new Promise((resolve) => worker.once('failed', resolve));
        await worker.add(job(n), { jobId: job(n).dedupeKey, attempts: 1 });
        await each;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await failed;
      await worker.close();
      const env = cleanEnv({ REDIS_URL: testStack().redisUrl, QUEUE_PREFIX: prefix });
      const result = await runScript('scripts/replay.ts', ['failed', '--limit', '2'], env);
      expect(result.code, result.stderr).to.equal(0);
      const queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
      try {
        const waiting = (await queue.getWaiting(0, -1)).map((j) => String(j.id)).sort();
        expect(waiting).to.deep.equal([job(0).dedupeKey, job(1).dedupeKey].sort());
        expect((await queue.getFailed()).map((j) => String(j.id))).to.deep.equal([job(2).dedupeKey]);
      } finally {
        await queue.close();
      }
    });
  });

  describe('spool', () => {
    const prefix = useQueuePrefix();
    let dir: string;
    let queue: Bull.Queue<WebhookJobData>;
    let worker: Bull.Queue<WebhookJobData>;
    let env: NodeJS.ProcessEnv;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'replay-spool-'));
      env = cleanEnv({ REDIS_URL: testStack().redisUrl, QUEUE_PREFIX: prefix });
      queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
      worker = createWebhookQueue({ redis: testStack().redisUrl, prefix });
      await idleWorker(worker);
    });
    after(async () => {
      rmSync(dir, { recursive: true, force: true });
      await Promise.all([queue.close(), worker.close()]);
    });

    it('queues each spooled event once, keyed by its dedupe key, and reports bad lines', async () => {
      const file = join(dir, 'segment-000000000001.ndjson');
      const lines = [job(10), job(11), job(10)].map((j) => JSON.stringify(j));
      writeFileSync(file, `${lines.join('\n')}\n{"dedupeKey":"short"}\n`);
      const first = await runScript('scripts/replay.ts', ['spool', file], env);
      expect(first.code).to.equal(3);
      expect(first.stdout).to.include(
        `(1 file) into ${prefix}:webhook-events: 2 queued, 1 already queued, 1 invalid`,
      );
      expect(first.stdout).to.include(`(Redis ${new URL(testStack().redisUrl).host})`);
      expect(first.stderr).to.include('invalid lines in');
      const second = await runScript('scripts/replay.ts', ['spool', file], env);
      expect(second.stdout).to.include('0 queued, 3 already queued, 1 invalid');
      const waiting = await queue.getWaiting(0, -1);
      expect(waiting.map((j) => j.id).sort()).to.deep.equal([job(10).dedupeKey, job(11).dedupeKey].sort());
      expect(waiting.find((j) => j.id === job(11).dedupeKey)?.data).to.deep.equal(job(11));
    });

    // A receiver that died mid-append leaves its last line cut short, never acknowledged: counted
    // invalid, it made a dead receiver's spool (what this replay is for) exit 3 whatever was in it.
    it('skips a last line cut short by a crash, saying so, and still ends well', async () => {
      const file = join(dir, 'segment-000000000007.ndjson');
      writeFileSync(file, `${JSON.stringify(job(70))}\n${JSON.stringify(job(71)).slice(0, 30)}`);
      const result = await runScript('scripts/replay.ts', ['spool', file], env);
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.include('1 queued, 0 already queued, 0 invalid, 1 cut short');
      expect(result.stderr).to.include(`${file} ends in a line cut short`);
      const ids = (await queue.getWaiting(0, -1)).map((j) => j.id);
      expect(ids).to.include(job(70).dedupeKey);
      expect(ids).not.to.include(job(71).dedupeKey);
    });

    it("queues a line's text as written, as the receiver's drainer does: nothing of the sender's JSON changes", async () => {
      // A __proto__ key is an ordinary key of data, and 1e400 is past a double: parsed and written
      // again, the first would be dropped and the second become null.
      const id = createHash('sha256').update('as-written').digest('hex');
      const line = `{"dedupeKey":"${id}","webhook":"main","receivedAt":"2026-11-20T10:00:00.000Z","event":"comment.didCreate","data":{"__proto__":{"x":1},"n":1e400,"ok":true}}`;
      const file = join(dir, 'as-written.ndjson');
      writeFileSync(file, `${line}\n`);
      const result = await runScript('scripts/replay.ts', ['spool', file], env);
      expect(result.stdout).to.include('1 queued, 0 already queued, 0 invalid');
      expect(await queue.client.hget(`${prefix}:webhook-events:${id}`, 'data')).to.equal(line);
    });

    it('replays a spool directory the receiver wrote (its own format, every segment)', async () => {
      const spoolDir = join(dir, 'receiver-spool');
      const spool = await openSpool(spoolDir, { maxSegmentBytes: 1 });
      for (const n of [30, 31, 32]) await spool.append(encodeWebhookJob(job(n)));
      await spool.close();
      const result = await runScript('scripts/replay.ts', ['spool', spoolDir], env);
      expect(result.code).to.equal(0);
      expect(result.stdout).to.include(
        `(3 files) into ${prefix}:webhook-events: 3 queued, 0 already queued, 0 invalid`,
      );
      const waiting = await queue.getWaiting(0, -1);
      for (const n of [30, 31, 32]) {
        expect(waiting.find((j) => j.id === job(n).dedupeKey)?.data).to.deep.equal(job(n));
      }
    });

    it('replays every segment-*.ndjson file of a spool directory and ignores other files', async () => {
      const spoolDir = join(dir, 'spool');
      mkdirSync(spoolDir);
      writeFileSync(join(spoolDir, 'segment-000000000001.ndjson'), `${JSON.stringify(job(20))}\n`);
      writeFileSync(join(spoolDir, 'segment-000000000002.ndjson'), `${JSON.stringify(job(21))}\n`);
      writeFileSync(join(spoolDir, 'notes.txt'), 'not a segment');
      const result = await runScript('scripts/replay.ts', ['spool', spoolDir], env);
      expect(result.code).to.equal(0);
      expect(result.stdout).to.include(
        `(2 files) into ${prefix}:webhook-events: 2 queued, 0 already queued, 0 invalid`,
      );
      const ids = (await queue.getWaiting(0, -1)).map((j) => j.id);
      expect(ids).to.include.members([job(20).dedupeKey, job(21).dedupeKey]);
    });

    // A folder with nothing of a spool in it (the parent of a copied spool, say) looked like a
    // drained spool and exited 0, and `replay && rm -rf` deleted the events never queued.
    it('refuses a directory with nothing of a spool in it, and queues nothing', async () => {
      const elsewhere = join(dir, 'not-a-spool');
      mkdirSync(join(elsewhere, 'copied', 'instance-0123456789ab'), { recursive: true });
      writeFileSync(
        join(elsewhere, 'copied', 'instance-0123456789ab', 'segment-000000000001.ndjson'),
        `${JSON.stringify(job(40))}\n`,
      );
      const result = await runScript('scripts/replay.ts', ['spool', elsewhere], env);
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include(`${elsewhere} is no spool folder`);
      expect(result.stdout).to.equal('');
      const ids = (await queue.getWaiting(0, -1)).map((j) => j.id);
      expect(ids).not.to.include(job(40).dedupeKey);
      // Nothing but a copied dev stack's data, whose receiver-spool is the default SPOOL_DIR.
      const backup = join(dir, 'backup');
      mkdirSync(join(backup, '.data', 'receiver-spool', 'instance-0123456789ab'), { recursive: true });
      const hidden = await runScript('scripts/replay.ts', ['spool', backup], env);
      expect(hidden.code, hidden.stderr).to.equal(2);
      expect(hidden.stderr).to.include(`${backup} is no spool folder`);
    });

    it('says so when a spool holds no segment (drained), and queues nothing', async () => {
      const drained = join(dir, 'drained');
      mkdirSync(join(drained, 'instance-0123456789ab'), { recursive: true });
      // A spool at a volume's root, emptied: what the file system and the desktop leave count not.
      const volume = join(dir, 'volume');
      mkdirSync(join(volume, 'lost+found'), { recursive: true });
      writeFileSync(join(volume, '.DS_Store'), '');
      const atRoot = await runScript('scripts/replay.ts', ['spool', volume], env);
      expect(atRoot.code, atRoot.stderr).to.equal(0);
      expect(atRoot.stderr).to.include(`no spool segments in ${volume}`);
      const result = await runScript('scripts/replay.ts', ['spool', drained], env);
      expect(result.code).to.equal(0);
      expect(result.stderr).to.include(`no spool segments in ${drained}`);
      expect(result.stdout).to.include(`(0 files) into ${prefix}:webhook-events: 0 queued`);
    });

    // These options belong to "failed"; with spool they once went unnoticed: --dry-run queued for
    // real, and --queue put webhook events where nothing reads them, while their dedupe marks kept
    // the right run from queueing them for a day.
    for (const [named, ...option] of [
      ['--dry-run', '--dry-run'],
      ['--limit', '--limit', '1'],
      ['--queue moderation-decisions', '--queue', 'moderation-decisions'],
    ] as const) {
      it(`refuses ${named} (a "failed" option) and queues nothing`, async () => {
        const file = join(dir, 'segment-000000000050.ndjson');
        writeFileSync(file, `${JSON.stringify(job(50))}\n`);
        const result = await runScript('scripts/replay.ts', ['spool', file, ...option], env);
        expect(result.code).to.equal(2);
        expect(result.stderr).to.equal(
          `spool: ${named} applies to "failed" only\n` +
            'Usage: npm run replay -- spool <file or spool directory>\n',
        );
        expect(await queue.getJob(job(50).dedupeKey)).to.equal(null);
        expect(await queue.client.exists(dedupeMarkKey(prefix, job(50).dedupeKey))).to.equal(0);
      });
    }

    it('takes --queue webhook-events, the queue it queues in anyway', async () => {
      const file = join(dir, 'segment-000000000051.ndjson');
      writeFileSync(file, `${JSON.stringify(job(51))}\n`);
      const result = await runScript('scripts/replay.ts', ['spool', file, '--queue', 'webhook-events'], env);
      expect(result.code).to.equal(0);
      expect(await queue.getJob(job(51).dedupeKey)).to.not.equal(null);
    });

    describe('with an event the receiver queued and the worker already finished (job trimmed)', () => {
      it("does not queue it again: the receiver's dedupe mark still holds it", async () => {
        const target = { queue, redis: queue.client, markPrefix: prefix, dedupeSeconds: 600 };
        expect(await enqueueOnce(target, encodeWebhookJob(job(40)))).to.equal('queued');
        await (await queue.getJob(job(40).dedupeKey))?.remove();
        const file = join(dir, 'segment-000000000040.ndjson');
        writeFileSync(file, `${JSON.stringify(job(40))}\n${JSON.stringify(job(41))}\n`);
        const result = await runScript('scripts/replay.ts', ['spool', file], env);
        expect(result.stdout).to.include('1 queued, 1 already queued, 0 invalid');
        const ids = (await queue.getWaiting(0, -1)).map((j) => j.id);
        expect(ids).to.include(job(41).dedupeKey).and.not.include(job(40).dedupeKey);
      });
    });
  });

  // With REDIS_URL alone (QUEUE_PREFIX unset: bull) against a deployment of QUEUE_PREFIX=prod, a
  // replay put every event into bull:webhook-events, which no worker of that deployment reads, said
  // "N queued" and exited 0: the operator then deleted the copied spool.
  describe('spool, when no worker reads the queue it would fill', () => {
    let dir: string;
    let redis: LocalServer;
    let deployment: Bull.Queue<WebhookJobData>;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'replay-no-worker-'));
      redis = await startRedis({ dir: join(dir, 'redis') });
      deployment = createWebhookQueue({ redis: redis.url, prefix: 'prod' });
      await idleWorker(deployment);
    });
    after(async () => {
      await deployment.close();
      await redis.stop();
      rmSync(dir, { recursive: true, force: true });
    });
    const onRedis = () => `Redis 127.0.0.1:${redis.port}`;

    it('refuses, naming the queue and QUEUE_PREFIX, and writes nothing; with the right prefix it queues', async () => {
      const file = segmentWith(dir, job(60));
      const unset = await runScript('scripts/replay.ts', ['spool', file], cleanEnv({ REDIS_URL: redis.url }));
      expect([unset.code, unset.stderr, unset.stdout]).to.deep.equal([
        2,
        `QUEUE_PREFIX: no worker reads bull:webhook-events (${onRedis()}; QUEUE_PREFIX unset, so bull): ` +
          "nothing queued; set the deployment's QUEUE_PREFIX, or give --no-workers-ok to queue for workers started later\n",
        '',
      ]);
      expect(await deployment.client.keys('bull:*')).to.deep.equal([]);
      const env = cleanEnv({ REDIS_URL: redis.url, QUEUE_PREFIX: 'prod' });
      const right = await runScript('scripts/replay.ts', ['spool', file], env);
      expect(right.code, right.stderr).to.equal(0);
      expect(right.stdout).to.include('(1 file) into prod:webhook-events: 1 queued');
      expect(await deployment.getJob(job(60).dedupeKey)).to.not.equal(null);
    });

    it('with --no-workers-ok, queues all the same, with a warning naming the queue', async () => {
      const file = segmentWith(dir, job(61));
      const env = cleanEnv({ REDIS_URL: redis.url, QUEUE_PREFIX: 'later' });
      const result = await runScript('scripts/replay.ts', ['spool', file, '--no-workers-ok'], env);
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.include(
        `warning: no worker reads later:webhook-events (${onRedis()}; QUEUE_PREFIX=later): ` +
          'its events wait for a worker started with QUEUE_PREFIX=later\n',
      );
      expect(result.stdout).to.include('(1 file) into later:webhook-events: 1 queued');
      const later = createWebhookQueue({ redis: redis.url, prefix: 'later' });
      try {
        expect(await later.getJob(job(61).dedupeKey)).to.not.equal(null);
      } finally {
        await later.close();
      }
    });

    // A Redis user without CLIENT (as managed services grant) cannot see the workers.
    it('refuses when it cannot tell (a Redis user without CLIENT), unless --no-workers-ok', async () => {
      await deployment.client.call(
        'ACL',
        'SETUSER',
        'replayer',
        'on',
        '>replayer-pw',
        '~*',
        '&*',
        '+@all',
        '-client',
      );
      const file = segmentWith(dir, job(62));
      const env = cleanEnv({
        REDIS_URL: `redis://replayer:replayer-pw@127.0.0.1:${redis.port}`,
        QUEUE_PREFIX: 'prod',
      });
      const refused = await runScript('scripts/replay.ts', ['spool', file], env);
      expect(refused.code).to.equal(2);
      expect(refused.stderr).to.match(
        new RegExp(
          `^QUEUE_PREFIX: cannot tell whether a worker reads prod:webhook-events \\(${onRedis()}; QUEUE_PREFIX=prod\\): ` +
            "CLIENT LIST refused \\(NOPERM[^\n]*\\); nothing queued; check QUEUE_PREFIX is the deployment's, then give --no-workers-ok\n$",
        ),
      );
      expect(await deployment.getJob(job(62).dedupeKey)).to.equal(null);
      const given = await runScript('scripts/replay.ts', ['spool', file, '--no-workers-ok'], env);
      expect(given.code, given.stderr).to.equal(0);
      expect(given.stderr).to.include('warning: cannot tell whether a worker reads prod:webhook-events');
      expect(given.stdout).to.include('(1 file) into prod:webhook-events: 1 queued');
    });
  });

  // bull's own getWorkers asks one node of a cluster, at random, while a worker's name is on the
  // node its CLIENT SETNAME happened to go to.
  describe('spool on a Redis Cluster', () => {
    const local = useRedisCluster('replay-workers');
    const prefix = `{${uniqueName('r')}}`;
    let dir: string;
    before(() => (dir = mkdtempSync(join(tmpdir(), 'replay-cluster-'))));
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('finds the worker on whichever node holds its name, and refuses a prefix none reads', async () => {
      const deployment = createWebhookQueue({ redis: local.target, prefix });
      local.atTeardown(() => deployment.close());
      await deployment.pause(true);
      void deployment.process(async () => undefined);
      const file = segmentWith(dir, job(63));
      const run = (queuePrefix: string) =>
        runScript(
          'scripts/replay.ts',
          ['spool', file],
          cleanEnv({ REDIS_CLUSTER_NODES: local.cluster.seeds, QUEUE_PREFIX: queuePrefix }),
          30_000,
        );
      // Refused until bull has named the worker's connection, queueing nothing.
      await waitFor(async () => (await run(prefix)).code === 0, 15_000, 'the replay to find the worker');
      expect(await deployment.getJob(job(63).dedupeKey)).to.not.equal(null);
      const other = await run('{other}');
      expect(other.code).to.equal(2);
      expect(other.stderr).to.include('QUEUE_PREFIX: no worker reads {other}:webhook-events');
    });
  });

  describe('when Redis cannot be used', () => {
    it('names the Redis it could not reach and why, never the password', async () => {
      const port = await freePort();
      const env = cleanEnv({ REDIS_URL: `redis://:not-this-password@127.0.0.1:${port}` });
      const result = await runScript('scripts/replay.ts', ['failed'], env);
      expect(result.code).to.equal(1);
      expect(result.stderr).to.equal(`error: cannot reach Redis at 127.0.0.1:${port}: ECONNREFUSED\n`);
    });

    describe('with a wrong password', () => {
      let dir: string;
      let redis: LocalServer;
      before(async () => {
        dir = mkdtempSync(join(tmpdir(), 'replay-auth-'));
        redis = await startRedis({ dir, password: 'the-right-one' });
      });
      after(async () => {
        await redis.stop();
        rmSync(dir, { recursive: true, force: true });
      });

      it('says the credentials were refused, naming the Redis but not the password', async () => {
        const env = cleanEnv({ REDIS_URL: `redis://:not-this-password@127.0.0.1:${redis.port}` });
        const result = await runScript('scripts/replay.ts', ['failed'], env);
        expect(result.code).to.equal(1);
        expect(result.stderr).to.match(
          new RegExp(
            `^error: Redis at 127\\.0\\.0\\.1:${redis.port} did not accept the credentials: (WRONGPASS|NOAUTH)\n$`,
          ),
        );
      });
    });
  });

  describe('with bad arguments', () => {
    const env = () => cleanEnv({ REDIS_URL: testStack().redisUrl });
    it('--help prints the usage and exits 0', async () => {
      const result = await runScript('scripts/replay.ts', ['--help'], env());
      expect(result.code).to.equal(0);
      expect(result.stdout).to.include('npm run replay -- failed');
    });
    it('no command exits 2', async () => {
      const result = await runScript('scripts/replay.ts', [], env());
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include('expected a command, "failed" or "spool"');
    });
    it('an unknown option exits 2 naming it', async () => {
      const result = await runScript('scripts/replay.ts', ['failed', '--force'], env());
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include("Unknown option '--force'");
    });
    it('--no-workers-ok with failed exits 2 (it belongs to spool)', async () => {
      const result = await runScript('scripts/replay.ts', ['failed', '--no-workers-ok'], env());
      expect([result.code, result.stderr]).to.deep.equal([
        2,
        'failed: --no-workers-ok applies to "spool" only\n',
      ]);
    });
    it('an unknown --queue exits 2 naming the queues there are', async () => {
      const result = await runScript('scripts/replay.ts', ['failed', '--queue', 'webhook-event'], env());
      expect(result.code).to.equal(2);
      expect(result.stderr).to.equal('--queue: expected webhook-events or moderation-decisions\n');
    });
    it('a missing spool file exits 2', async () => {
      const result = await runScript('scripts/replay.ts', ['spool', '/nonexistent/spool.ndjson'], env());
      expect(result.code).to.equal(2);
      expect(result.stderr).to.equal('cannot read /nonexistent/spool.ndjson: no such file\n');
    });
    // npm passes its settings from an .npmrc on as npm_config_* too: not options npm took from
    // the command line, and refusing them refused every correct command.
    it('takes no setting of an .npmrc for an option npm took', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'npmrc-'));
      /** `npm run -s replay <args>` with `npmrc` as the user's .npmrc. */
      const withNpmrc = (npmrc: string, args: string[]) => {
        writeFileSync(join(dir, '.npmrc'), npmrc);
        return runCommand(
          'npm',
          ['run', '-s', 'replay', ...args],
          cleanEnv({ REDIS_URL: testStack().redisUrl, npm_config_userconfig: join(dir, '.npmrc') }),
        );
      };
      try {
        const result = await withNpmrc('limit=5\n; a comment\nqueue = webhook-events\n', ['--', 'bogus']);
        expect(result.code).to.equal(2);
        expect(result.stderr).to.include('expected a command, "failed" or "spool"');
        expect(result.stderr).not.to.include('npm took');
        // But typed before `--`, an option the .npmrc sets otherwise is npm's again.
        const typed = await withNpmrc('dry-run=false\n', ['bogus', '--dry-run']);
        expect(typed.code).to.equal(2);
        expect(typed.stderr).to.include('npm took --dry-run');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
    it('a bad REDIS_URL exits 2 naming the variable', async () => {
      const result = await runScript('scripts/replay.ts', ['failed'], cleanEnv({ REDIS_URL: 'http://x' }));
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include('REDIS_URL: expected a URL starting with redis://');
    });
  });
});

/**
 * Operator tool: puts events back on the webhook queue, from its failed set (the dead
 * letter) or from a receiver's spool file, without processing any of them twice.
 */
import type Bull from 'bull';
import { statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isSpoolEntry, listInstances } from '../receiver/spool/instance-folders.ts';
import { listSegments, segmentPath } from '../receiver/spool/segment-files.ts';
import { queueRedisShape, withRedisTarget } from '../shared/config/common-config.ts';
import { receiverShape } from '../receiver/receiver-config.ts';
import { createWebhookQueue, WEBHOOK_QUEUE_NAME } from '../shared/queue/webhook-queue.ts';
import { DECISIONS_QUEUE_NAME } from '../tray-service/moderation/decision-delivery.ts';
import { describeRedisFailure } from '../shared/redis/redis-failure.ts';
import { describeRedisTarget, isCluster, type RedisTarget } from '../shared/redis/redis-target.ts';
import { TimeoutError } from '../shared/errors/timeout-error.ts';
import { UsageError } from '../shared/errors/usage-error.ts';
import { withTimeout } from '../shared/time/with-timeout.ts';
import {
  commandLinePath,
  envText,
  parseCli,
  statOperand,
  progressBar,
  runCli,
  scriptEnv,
} from './lib/cli.ts';
import {
  ERROR_MESSAGES,
  failedJobIdPages,
  failedSoFar,
  retryFailedJobs,
} from './lib/replay/retry-failed-jobs.ts';
import { requeueSpool } from './lib/replay/requeue-spool.ts';
import { queueWorkers } from './lib/replay/queue-workers.ts';
import { ReplicaFence } from '../receiver/store/enqueue-once.ts';

/**
 * How long a spool's replay on a cluster waits for a replica to confirm each event: no caller
 * waits on it, so longer than the receiver's (a third of its enqueue budget).
 */
const REPLAY_REPLICA_WAIT_MS = 2_000;

/** The queues whose failed jobs a replay moves back; a spool holds only webhook events. */
const QUEUES = [WEBHOOK_QUEUE_NAME, DECISIONS_QUEUE_NAME];

const usage = `
Usage:
  npm run replay -- failed [--queue <name>] [--limit <n>] [--dry-run]
  npm run replay -- spool <file or spool directory> [--no-workers-ok]

failed   Moves the queue's failed jobs back to waiting (bull's job.retry()), each exactly once:
         a job another operator or run already moved back is skipped. Only jobs failed when the
         command starts are moved, so a job that fails again is not looped.
spool    Queues the events of a receiver spool file (NDJSON, one queued event per line), or of
         every segment-*.ndjson file of a spool directory (and of its instance-* folders, one per
         receiver process), e.g. copied from a receiver that will not come back (a running
         receiver drains its own spool). Nothing is verified again (the
         receiver verified each event before spooling it); an event queued within the dedupe
         window or still in the queue (same dedupe key) is not queued twice, so replaying a file
         twice is harmless. Refused (nothing queued) while no worker reads the queue under
         QUEUE_PREFIX: a wrong prefix puts the events where the deployment never reads them.

Options:
  --queue <name>   failed only: ${WEBHOOK_QUEUE_NAME} (the default) or ${DECISIONS_QUEUE_NAME}
  --limit <n>      failed only: move at most n failed jobs, oldest failures first (default: all)
  --dry-run        failed only: only count the failed jobs (spool has no dry run and refuses it)
  --no-workers-ok  spool only: queue even when no worker reads the queue (workers started later)
  -h, --help       show this help

Environment: REDIS_URL or REDIS_CLUSTER_NODES, QUEUE_PREFIX, WEBHOOK_DEDUPE_SECONDS (as for the services).
Exit code: 0 done, 1 failed, 2 bad arguments or configuration, 3 done with errors or invalid lines.
`;

/**
 * A spool file, or every segment of a spool directory: those of each receiver's instance folder in
 * it and those directly in it, each folder in append order (the receiver's own listing).
 */
async function spoolFiles(path: string): Promise<string[]> {
  if (!statSync(path).isDirectory()) return [path];
  // A folder with entries but none of a spool's (its parent, a copy one level up) is not a drained
  // spool: "nothing to replay" and exit 0 there let `replay && rm -rf` delete what was never queued.
  // What a file system or a desktop leaves in any folder says nothing (a spool at a volume's root);
  // a hidden folder does (a copied `.data`, which holds the default spool).
  const entries = (await readdir(path, { withFileTypes: true }))
    .filter((entry) => !(entry.name.startsWith('.') && !entry.isDirectory()) && entry.name !== 'lost+found')
    .map((entry) => entry.name);
  if (entries.length > 0 && !entries.some(isSpoolEntry))
    throw new UsageError(
      `${path} is no spool folder: it holds no segment-*.ndjson file and no instance-* folder ` +
        `(name a receiver's SPOOL_DIR, or a copy of it)`,
    );
  const folders = [path, ...(await listInstances(path)).folders.map((name) => join(path, name))];
  const files: string[] = [];
  for (const folder of folders) {
    for (const segment of await listSegments(folder)) files.push(segmentPath(folder, segment.name));
  }
  return files;
}

/**
 * Checks the queue's connection with a PING: bull's isReady() only waits for its scripts, which
 * need no server. When Redis cannot be used, the command fails with ioredis's "max retries per
 * request" error, which says nothing of where or why; the connection's own error (ECONNREFUSED,
 * WRONGPASS, ...) arrives as the queue's `error` event, so that is the one reported.
 */
async function untilReady(queue: Bull.Queue, target: RedisTarget): Promise<void> {
  let connectionError: unknown;
  const remember = (error: unknown) => (connectionError = error);
  queue.on('error', remember);
  try {
    const ready = queue.isReady().then(() => queue.client.ping());
    await withTimeout(ready, 5_000, `cannot reach Redis at ${describeRedisTarget(target)}`);
  } catch (error) {
    if (error instanceof TimeoutError && connectionError === undefined) throw error;
    throw new Error(describeRedisFailure(target, connectionError ?? error));
  } finally {
    queue.removeListener('error', remember);
  }
}

/**
 * Refuses a spool's replay into a queue no worker reads, unless `anyway`: with QUEUE_PREFIX unset
 * (bull's prefix) against a deployment of another, every event went where none of its workers
 * reads, the summary said "N queued", and the operator deleted the copied spool. Checked before
 * anything is queued, so a refused run leaves nothing behind. A Redis that does not list its
 * clients (a user without CLIENT) is refused alike: the prefix cannot be checked there. With
 * `anyway`, what was found is said on stderr all the same.
 */
async function checkWorkers(
  queue: Bull.Queue,
  env: { QUEUE_PREFIX: string; redis: RedisTarget },
  anyway: boolean,
): Promise<void> {
  const workers = await queueWorkers(queue, env.QUEUE_PREFIX);
  if ('count' in workers && workers.count > 0) return;
  const queueKey = `${env.QUEUE_PREFIX}:${queue.name}`;
  const prefixSet = envText('QUEUE_PREFIX') !== undefined;
  const where =
    `Redis ${describeRedisTarget(env.redis)}; ` +
    (prefixSet ? `QUEUE_PREFIX=${env.QUEUE_PREFIX}` : `QUEUE_PREFIX unset, so ${env.QUEUE_PREFIX}`);
  const unknown = 'unknown' in workers;
  const problem = unknown
    ? `cannot tell whether a worker reads ${queueKey} (${where}): CLIENT LIST refused (${workers.unknown})`
    : `no worker reads ${queueKey} (${where})`;
  if (anyway) {
    const then = unknown
      ? 'queued on --no-workers-ok'
      : `its events wait for a worker started with QUEUE_PREFIX=${env.QUEUE_PREFIX}`;
    process.stderr.write(`warning: ${problem}: ${then}\n`);
    return;
  }
  throw new UsageError(
    unknown
      ? `QUEUE_PREFIX: ${problem}; nothing queued; check QUEUE_PREFIX is the deployment's, then give --no-workers-ok`
      : `QUEUE_PREFIX: ${problem}: nothing queued; set the deployment's QUEUE_PREFIX, or give --no-workers-ok to queue for workers started later`,
  );
}

async function main(): Promise<number> {
  const { values, positionals } = parseCli(
    {
      args: process.argv.slice(2),
      options: {
        queue: { type: 'string' },
        limit: { type: 'string' },
        'dry-run': { type: 'boolean' },
        'no-workers-ok': { type: 'boolean' },
      },
      allowPositionals: true,
    },
    usage,
  );
  const [command, ...rest] = positionals;
  if (command !== 'failed' && command !== 'spool') {
    throw new UsageError(`expected a command, "failed" or "spool"\n${usage}`);
  }
  if (values.limit !== undefined && !/^[1-9]\d*$/.test(values.limit)) {
    throw new UsageError('--limit: expected a whole number >= 1');
  }
  if (values.queue !== undefined && !QUEUES.includes(values.queue)) {
    throw new UsageError(`--queue: expected ${QUEUES.join(' or ')}`);
  }
  const file = rest[0] === undefined ? undefined : commandLinePath(rest[0]);
  if (command === 'spool') {
    if (!file || rest.length > 1) throw new UsageError('spool: expected exactly one file or directory');
    // A spool run cannot count without deciding per event (the dedupe script both checks and
    // queues), so a "dry" spool run would queue for real: refuse the failed-only options instead.
    // A spool holds webhook events only. Queued elsewhere, each would be lost there, and its dedupe
    // mark (keyed without the queue) would then keep the right run from queueing it for a day.
    const failedOnly = [
      values['dry-run'] ? '--dry-run' : undefined,
      values.limit !== undefined ? '--limit' : undefined,
      values.queue !== undefined && values.queue !== WEBHOOK_QUEUE_NAME
        ? `--queue ${values.queue}`
        : undefined,
    ].find((option) => option !== undefined);
    if (failedOnly) {
      throw new UsageError(
        `spool: ${failedOnly} applies to "failed" only\nUsage: npm run replay -- spool <file or spool directory>`,
      );
    }
    statOperand(file);
  } else if (rest.length > 0) {
    throw new UsageError(`failed: unexpected argument ${rest[0]}`);
  } else if (values['no-workers-ok']) {
    throw new UsageError('failed: --no-workers-ok applies to "spool" only');
  }
  const env = withRedisTarget(
    scriptEnv({
      ...queueRedisShape,
      WEBHOOK_DEDUPE_SECONDS: receiverShape.WEBHOOK_DEDUPE_SECONDS,
    }),
  );
  const queueName = values.queue ?? WEBHOOK_QUEUE_NAME;
  // Named in every summary: without REDIS_URL the replay reads a local default, perhaps another
  // Redis than the one meant (a shell that did not read the stack's stack.env). So is the queue's
  // key prefix: without QUEUE_PREFIX it is bull's, perhaps not the deployment's.
  const onRedis = `(Redis ${describeRedisTarget(env.redis)})`;
  const queueKey = `${env.QUEUE_PREFIX}:${queueName}`;
  const queue = createWebhookQueue({ redis: env.redis, prefix: env.QUEUE_PREFIX }, queueName);
  try {
    await untilReady(queue, env.redis);
    if (command === 'spool' && file) {
      const files = await spoolFiles(file);
      // A drained spool: said, and the run ends well (spoolFiles refused a folder that is none).
      if (files.length === 0)
        process.stderr.write(
          `no spool segments in ${file} (segment-*.ndjson, in it or in its instance-* folders): nothing to replay\n`,
        );
      if (files.length > 0) await checkWorkers(queue, env, values['no-workers-ok'] === true);
      const sizes = files.map((f) => statSync(f).size);
      const bar = progressBar('replaying', 'bytes');
      bar.start(
        sizes.reduce((a, b) => a + b, 0),
        0,
      );
      const totals = { queued: 0, alreadyQueued: 0, invalid: 0, cutOff: 0 };
      const problems: string[] = [];
      // On a cluster, as the receiver does: an event is counted queued once a replica holds it too,
      // or a failover right after the write loses what the operator then deletes from the spool.
      const fence = isCluster(env.redis)
        ? new ReplicaFence(REPLAY_REPLICA_WAIT_MS, (message) =>
            process.stderr.write(
              `warning: the Redis user may not run ROLE (${message}): every event waits for a replica\n`,
            ),
          )
        : undefined;
      try {
        let done = 0;
        for (const [index, path] of files.entries()) {
          const target = {
            queue,
            redis: queue.client,
            markPrefix: env.QUEUE_PREFIX,
            dedupeSeconds: env.WEBHOOK_DEDUPE_SECONDS,
            ...(fence ? { fence } : {}),
          };
          const counts = await requeueSpool(target, path, (bytes) => bar.update(done + bytes));
          done += sizes[index] ?? 0;
          totals.queued += counts.queued;
          totals.alreadyQueued += counts.alreadyQueued;
          totals.invalid += counts.invalid;
          totals.cutOff += counts.cutOff;
          if (counts.invalid > 0)
            problems.push(`invalid lines in ${path}: ${counts.invalidLines.join(', ')}`);
          if (counts.cutOff > 0)
            problems.push(
              `${path} ends in a line cut short (an append the receiver never finished, so never acknowledged): skipped`,
            );
        }
      } finally {
        bar.stop();
      }
      for (const problem of problems) process.stderr.write(`${problem}\n`);
      process.stdout.write(
        `replayed ${file} (${files.length} ${files.length === 1 ? 'file' : 'files'}) into ${queueKey}: ` +
          `${totals.queued} queued, ${totals.alreadyQueued} already queued, ${totals.invalid} invalid` +
          `${totals.cutOff > 0 ? `, ${totals.cutOff} cut short` : ''} ${onRedis}\n`,
      );
      return totals.invalid > 0 ? 3 : 0;
    }
    const limit = values.limit === undefined ? Infinity : Number(values.limit);
    const { upTo, total } = await failedSoFar(queue, limit);
    if (values['dry-run']) {
      process.stdout.write(`${total} failed jobs in ${queueKey} would be moved back to waiting ${onRedis}\n`);
      return 0;
    }
    const bar = progressBar('retrying', 'jobs');
    bar.start(total, 0);
    const counts = { moved: 0, skipped: 0, errors: 0 };
    const errorMessages = new Set<string>();
    try {
      let done = 0;
      for await (const ids of failedJobIdPages(queue, { limit, upTo })) {
        const page = await retryFailedJobs(queue, ids, (inPage) => bar.update(done + inPage));
        done += ids.length;
        counts.moved += page.moved;
        counts.skipped += page.skipped;
        counts.errors += page.errors;
        for (const message of page.errorMessages) errorMessages.add(message);
      }
    } finally {
      bar.stop();
    }
    // An error count alone says nothing to act on (Redis out of memory, a refused command).
    for (const message of [...errorMessages].slice(0, ERROR_MESSAGES))
      process.stderr.write(`error: ${message}\n`);
    process.stdout.write(
      `${queueKey}: ${counts.moved} failed jobs moved back to waiting, ${counts.skipped} skipped ` +
        `(no longer failed), ${counts.errors} errors ${onRedis}\n`,
    );
    return counts.errors > 0 ? 3 : 0;
  } finally {
    await queue.close();
  }
}

runCli(main);

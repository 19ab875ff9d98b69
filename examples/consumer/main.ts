import { queueRedisShape, withRedisTarget } from '../../shared/config/common-config.ts';
import { loadOrExit } from '../../shared/config/load-or-exit.ts';
import { parseEnv } from '../../shared/config/parse-env.ts';
import { describeRedisFailure, isRedisAuthError } from '../../shared/redis/redis-failure.ts';
import { describeRedisTarget } from '../../shared/redis/redis-target.ts';
import { startConsumer, type WebhookEvent } from './start-consumer.ts';

/**
 * The example consumer as a program: prints one line per event. Replace `handle` with your own
 * code. Reads the receiver's REDIS_URL (or REDIS_CLUSTER_NODES) and QUEUE_PREFIX (docs/starter-kit.md).
 */
const handle = (event: WebhookEvent) => {
  process.stdout.write(
    `${event.receivedAt.toISOString()} ${event.event} ${event.key} (attempt ${event.attempt})\n`,
  );
};

// The receiver's Redis as the receiver reads it: REDIS_URL, or a cluster (REDIS_CLUSTER_NODES).
const config = loadOrExit(() => withRedisTarget(parseEnv(queueRedisShape, process.env)));
const consumer = startConsumer(
  {
    redis: config.redis,
    prefix: config.QUEUE_PREFIX,
    // A job that failed for good waits in the failed set until someone replays it: say so.
    onFailed: ({ event, error, final }) => {
      process.stderr.write(
        final
          ? `${event.event} ${event.key} failed on its last attempt (${event.attempt}): ${error.message}; ` +
              'it is in the failed set: `npm run replay -- failed` runs it again\n'
          : `${event.event} ${event.key} failed (attempt ${event.attempt}): ${error.message}; retried with backoff\n`,
      );
    },
    // Bull takes no job after this for the life of the process: exit, for a supervisor to restart it.
    onStopped: (error) => {
      process.stderr.write(
        isRedisAuthError(error)
          ? `error: ${describeRedisFailure(config.redis, error)}\n`
          : `error: the consumer could not start taking jobs from Redis at ${describeRedisTarget(config.redis)}: ${error.message}\n`,
      );
      process.exit(1);
    },
  },
  handle,
);

// Without a listener, a refused password ended in a stack trace (which also showed the password
// the AUTH command sent) and an unreachable Redis in silence. A refused password cannot get
// better by retrying: stop. An unreachable Redis may come back: say so once per cause, and again
// after it answered in between.
let reported: string | undefined;
consumer.queue.on('error', (error: unknown) => {
  if (isRedisAuthError(error)) {
    process.stderr.write(`error: ${describeRedisFailure(config.redis, error)}\n`);
    process.exit(1);
  }
  // A command that gave up while disconnected: the connection's own error says why.
  if (error instanceof Error && error.name === 'MaxRetriesPerRequestError') return;
  const line = `${describeRedisFailure(config.redis, error)}; retrying`;
  if (line !== reported) process.stderr.write(`${line}\n`);
  reported = line;
});
consumer.queue.client.on('ready', () => {
  if (reported !== undefined)
    process.stderr.write(`connected to Redis at ${describeRedisTarget(config.redis)}\n`);
  reported = undefined;
});
process.stdout.write(`consuming ${consumer.queue.name} (prefix ${config.QUEUE_PREFIX})\n`);

const stop = () => {
  // A close that fails (Redis gone) still ends the process, with one line, not a stack trace; one
  // that a hung job holds past the deadline ends it too (the job runs again elsewhere).
  consumer.close().then(
    (outcome) => {
      if (outcome === 'timed out')
        process.stderr.write('a job was still running at the deadline; bull runs it again (stalled)\n');
      process.exit(0);
    },
    (error: unknown) => {
      process.stderr.write(`stopped without closing cleanly: ${(error as Error).message}\n`);
      process.exit(1);
    },
  );
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);

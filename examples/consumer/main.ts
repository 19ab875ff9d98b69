import { commonShape } from '../../shared/config/common-config.ts';
import { loadOrExit } from '../../shared/config/load-or-exit.ts';
import { parseEnv } from '../../shared/config/parse-env.ts';
import { describeRedisFailure, isRedisAuthError } from '../../shared/redis/redis-failure.ts';
import { describeRedisTarget } from '../../shared/redis/redis-target.ts';
import { startConsumer, type WebhookEvent } from './start-consumer.ts';

/**
 * The example consumer as a program: prints one line per event. Replace `handle` with your own
 * code. Reads the receiver's REDIS_URL and QUEUE_PREFIX (docs/starter-kit.md).
 */
const handle = (event: WebhookEvent) => {
  process.stdout.write(
    `${event.receivedAt.toISOString()} ${event.event} ${event.key} (attempt ${event.attempt})\n`,
  );
};

const config = loadOrExit(() =>
  parseEnv({ REDIS_URL: commonShape.REDIS_URL, QUEUE_PREFIX: commonShape.QUEUE_PREFIX }, process.env),
);
const consumer = startConsumer({ redisUrl: config.REDIS_URL, prefix: config.QUEUE_PREFIX }, handle);

// Without a listener, a refused password ended in a stack trace (which also showed the password
// the AUTH command sent) and an unreachable Redis in silence. A refused password cannot get
// better by retrying: stop. An unreachable Redis may come back: say so once per cause, and again
// after it answered in between.
let reported: string | undefined;
consumer.queue.on('error', (error: unknown) => {
  if (isRedisAuthError(error)) {
    process.stderr.write(`error: ${describeRedisFailure(config.REDIS_URL, error)}\n`);
    process.exit(1);
  }
  // A command that gave up while disconnected: the connection's own error says why.
  if (error instanceof Error && error.name === 'MaxRetriesPerRequestError') return;
  const line = `${describeRedisFailure(config.REDIS_URL, error)}; retrying`;
  if (line !== reported) process.stderr.write(`${line}\n`);
  reported = line;
});
consumer.queue.client.on('ready', () => {
  if (reported !== undefined)
    process.stderr.write(`connected to Redis at ${describeRedisTarget(config.REDIS_URL)}\n`);
  reported = undefined;
});
process.stdout.write(`consuming ${consumer.queue.name} (prefix ${config.QUEUE_PREFIX})\n`);

const stop = () => {
  // A close that fails (Redis gone) still ends the process, with one line, not a stack trace.
  consumer.close().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`stopped without closing cleanly: ${(error as Error).message}\n`);
      process.exit(1);
    },
  );
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);

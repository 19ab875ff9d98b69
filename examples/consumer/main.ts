import { commonShape } from '../../shared/config/common-config.ts';
import { loadOrExit } from '../../shared/config/load-or-exit.ts';
import { parseEnv } from '../../shared/config/parse-env.ts';
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
process.stdout.write(`consuming ${consumer.queue.name} (prefix ${config.QUEUE_PREFIX})\n`);

const stop = () => {
  void consumer.close().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);

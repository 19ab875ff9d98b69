import Bull from 'bull';
import { Redis } from 'ioredis';

/** The one queue between receiver and worker. README, "Queue", documents name and options. */
export const WEBHOOK_QUEUE_NAME = 'webhook-events';

/** What the receiver enqueues for each verified delivery. */
export interface WebhookJobData {
  /** Lowercase hex SHA-256 of the raw body; also the bull job id. */
  dedupeKey: string;
  /** Name of the webhook whose secret verified the signature. */
  webhook: string;
  /** ISO 8601 time the receiver accepted the delivery. */
  receivedAt: string;
  event: string;
  data: Record<string, unknown>;
}

/**
 * Job options for every webhook job. Jobs are retried with exponential backoff (1 s, 2 s, 4 s, ...)
 * so a MongoDB outage of a few minutes costs nothing; after the last attempt the job stays in the
 * failed set (the dead letter) until `scripts/replay` moves it back.
 */
export const webhookJobOptions: Bull.JobOptions = {
  attempts: 10,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: { age: 24 * 3600, count: 10_000 },
  removeOnFail: false,
};

export interface QueueConnection {
  redisUrl: string;
  prefix: string;
}

/**
 * Bull needs three connections; the blocking and subscriber ones must never time out requests
 * (bull's documented requirement: maxRetriesPerRequest null, enableReadyCheck false).
 */
export function createWebhookQueue(
  connection: QueueConnection,
  name = WEBHOOK_QUEUE_NAME,
): Bull.Queue<WebhookJobData> {
  const clients: Redis[] = [];
  const queue = new Bull<WebhookJobData>(name, {
    prefix: connection.prefix,
    createClient: (type) => {
      const client = new Redis(connection.redisUrl, {
        maxRetriesPerRequest: type === 'client' ? 1 : null,
        enableReadyCheck: type === 'client',
        connectTimeout: 2_000,
        retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
      });
      clients.push(client);
      return client;
    },
  });
  // Bull disconnects only the clients it created itself; without this, every closed queue would
  // leave its three connections reconnecting for the life of the process.
  const close = queue.close.bind(queue);
  queue.close = async (doNotWaitJobs?: boolean) => {
    try {
      await close(doNotWaitJobs);
    } finally {
      for (const client of clients) client.disconnect();
    }
  };
  return queue;
}

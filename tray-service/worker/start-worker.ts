import type Bull from 'bull';
import type { Db } from 'mongodb';
import type { Registry } from 'prom-client';
import type { Logger } from '../../shared/logging/create-logger.ts';
import type { WebhookJobData } from '../../shared/queue/webhook-queue.ts';
import { storeEvent } from '../store/store-event.ts';

export interface WorkerDeps {
  queue: Bull.Queue<WebhookJobData>;
  db: Db;
  logger: Logger;
  registry: Registry;
  concurrency?: number;
}

export interface RunningWorker {
  close(): Promise<void>;
}

export async function startWorker(deps: WorkerDeps): Promise<RunningWorker> {
  void deps.queue.process(deps.concurrency ?? 4, async (job) => {
    await storeEvent(deps.db, job.data);
  });
  return {
    close: async () => {
      // Waits for in-flight jobs; unfinished ones are picked up again as stalled jobs.
      await deps.queue.close();
    },
  };
}

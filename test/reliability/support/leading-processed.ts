import type { RedisTarget } from '../../../shared/redis/redis-target.ts';
import { waitUntilQueueEmpty } from './end-to-end-ledger.ts';
import { waitUntilDrained } from './receiver-process.ts';

/**
 * A burst's `settleLeading` (burst.ts): resolves once the receivers have queued everything they
 * acknowledged (their spools drained) and the workers have run every job of the queue, so the
 * leading bodies sent so far are processed before the rest is sent. Bounded, as every wait here.
 */
export function leadingProcessed(
  redisUrl: RedisTarget,
  prefix: string,
  receiverPorts: readonly number[],
): () => Promise<void> {
  return async () => {
    for (const port of receiverPorts) await waitUntilDrained(port);
    await waitUntilQueueEmpty(redisUrl, prefix, 120_000);
  };
}

import type { Logger } from '../../shared/logging/create-logger.ts';
import { cappedExponentialDelay } from '../../shared/queue/capped-exponential-backoff.ts';

export interface BanRepublisher {
  /** Publishes every stored ban again soon; calls while one runs make one more run after it. */
  request(): void;
  /** Stops retrying (worker shutdown); a run under way finishes on its own. */
  close(): void;
}

export interface BanRepublisherOptions {
  /** Reads every stored ban and publishes the whole set (publishAllBans). */
  republish: () => Promise<void>;
  logger: Logger;
  /** Wait before the second try; doubles per failure up to maxRetryMs. */
  firstRetryMs?: number;
  maxRetryMs?: number;
}

/**
 * Runs the whole republish when Redis may have lost the published set (after a reconnect, or when
 * a publish finds the set gone) and keeps trying until it lands. Tried once, a republish that met
 * a storage not answering yet (restarted with Redis) left the set unpublished until the worker's
 * next start, and the next ban then published itself alone.
 */
export function createBanRepublisher(options: BanRepublisherOptions): BanRepublisher {
  const { firstRetryMs = 1_000, maxRetryMs = 30_000 } = options;
  let running = false;
  let again = false;
  let closed = false;
  let failures = 0;
  let retry: NodeJS.Timeout | undefined;

  const run = async (): Promise<void> => {
    running = true;
    again = false;
    try {
      await options.republish();
      if (failures > 0) options.logger.info({ failures }, 'stored bans published again');
      failures = 0;
    } catch (error) {
      failures += 1;
      const delayMs = cappedExponentialDelay(failures, { firstMs: firstRetryMs, maxMs: maxRetryMs });
      options.logger.warn(
        { err: (error as Error).message, failures, retryInMs: delayMs },
        'stored bans not published again; retried',
      );
      if (!closed) {
        retry = setTimeout(() => {
          retry = undefined;
          request();
        }, delayMs);
        retry.unref();
      }
    } finally {
      running = false;
    }
    if (again && !closed) request();
  };

  const request = () => {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    // A request while a retry waits runs now: what it met may be over.
    clearTimeout(retry);
    retry = undefined;
    void run();
  };

  return {
    request,
    close() {
      closed = true;
      clearTimeout(retry);
    },
  };
}

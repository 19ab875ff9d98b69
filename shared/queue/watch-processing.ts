import type { Logger } from '../logging/create-logger.ts';
import { redactUrlCredentials } from '../logging/redact-url-credentials.ts';

export interface ProcessingWatch {
  /** The queue as its lines name it: `webhook`, `decision`. */
  name: string;
  logger: Logger;
  /** True once the consumer's own close began: bull's set-up cut short by it is no failure. */
  closing: () => boolean;
  /** Asks the process to stop (exit 1): a consumer that takes no jobs must not look alive. */
  onStopped?: (reason: string) => void;
}

/**
 * Watches the promise bull's `process()` answers. It rejects when the consumer's set-up fails (its
 * Redis connection closed or refused a command while bull subscribed and moved unlocked jobs),
 * and bull then takes no job for the rest of the process's life: a worker that looks alive, its
 * queue growing. Left unwatched, the rejection ended the process as an unhandled one, with no word
 * of the queue, and also when the shutdown itself closed the connection during that set-up.
 */
export function watchProcessing(processing: Promise<unknown>, watch: ProcessingWatch): void {
  processing.catch((error: unknown) => {
    if (watch.closing()) return;
    const message = redactUrlCredentials(error instanceof Error ? error.message : String(error));
    const reason = `the ${watch.name} queue's consumer could not start taking jobs: ${message}`;
    watch.logger.fatal({ err: message }, reason);
    watch.onStopped?.(reason);
  });
}

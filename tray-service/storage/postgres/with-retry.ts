/** SQLSTATEs a transaction can meet under concurrency and succeed with when simply run again. */
const RETRYABLE = new Set([
  '40P01', // deadlock_detected
  '40001', // serialization_failure
]);

export function isRetryable(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && RETRYABLE.has((error as { code?: string }).code ?? '')
  );
}

export interface RetryOptions {
  /** Tries in all. */
  attempts?: number;
  /** Which failures are tried again. */
  retryable?: (error: unknown) => boolean;
  /** The pause after the `tried`-th failed try. */
  pauseMs?: (tried: number) => number;
}

/**
 * Runs `attempt` again when PostgreSQL aborted it for a deadlock or a serialization failure, a
 * bounded number of times with a short random pause: such aborts are the engine's way of
 * resolving a race, and belong to this adapter, not to the queue's retries. `options` tries other
 * failures the same way.
 */
export async function withRetry<T>(
  attempt: () => Promise<T>,
  {
    attempts = 5,
    retryable = isRetryable,
    pauseMs = (tried) => Math.random() * 20 * tried,
  }: RetryOptions = {},
): Promise<T> {
  for (let tried = 1; ; tried++) {
    try {
      return await attempt();
    } catch (error) {
      if (!retryable(error) || tried >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, pauseMs(tried)));
    }
  }
}

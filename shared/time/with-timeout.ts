import { TimeoutError } from '../errors/timeout-error.ts';

/**
 * Settles with `promise`, or rejects with a TimeoutError (carrying `message` when given) after
 * `ms`. The operation itself is not cancelled (a Redis command already sent may still complete):
 * callers must be idempotent.
 */
export async function withTimeout<T>(promise: Promise<T>, ms: number, message?: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(ms, message)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

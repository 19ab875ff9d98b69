/**
 * What `value` settles to, or a rejection with the signal's reason as soon as `signal` aborts
 * (at once when it has): for what the client awaits but cannot abort itself, the app's `getToken`,
 * so that an abort ends a call or a stream at once, whatever the app's token source is doing.
 */
export function untilAborted<T>(value: T | PromiseLike<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return Promise.resolve(value);
  if (signal.aborted) {
    // Dropped, but never left to fail unhandled: that would end a Node process.
    Promise.resolve(value).catch(() => undefined);
    return Promise.reject(signal.reason as unknown);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as unknown);
    signal.addEventListener('abort', onAbort, { once: true });
    // Listening no longer once settled: a long-lived signal would otherwise keep every token.
    void Promise.resolve(value)
      .then(resolve, reject)
      .finally(() => signal.removeEventListener('abort', onAbort));
  });
}

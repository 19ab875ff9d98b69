/**
 * The longest delay a timer takes: setTimeout runs anything longer after 1 ms (browsers and
 * Node alike), so a wait of a month a server asked for would end at once.
 */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Resolves after `ms` (any length), or rejects with the signal's reason as soon as it aborts. */
export function wait(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    // A wait longer than a timer can count is timers one after the other.
    const arm = (left: number) => {
      timer = setTimeout(
        () => {
          if (left > MAX_TIMER_MS) {
            arm(left - MAX_TIMER_MS);
            return;
          }
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        Math.min(left, MAX_TIMER_MS),
      );
    };
    arm(ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

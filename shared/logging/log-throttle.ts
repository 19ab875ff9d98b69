/**
 * Says a repeated line at most once per `everyMs` for each key, and with it how many went unsaid
 * since: for a failure every request or every retry meets alike while a dependency is down, where
 * one line each would fill the disk and bury everything else. Remembers at most `maxKeys` keys,
 * forgetting the one said longest ago first.
 *
 * The function answers, for one occurrence of `key`, how many went unsaid before it when this one
 * is to be said, or undefined when it is not.
 */
export function createLogThrottle(everyMs: number, maxKeys = 100): (key: string) => number | undefined {
  const keys = new Map<string, { saidAt: number; unsaid: number }>();
  return (key) => {
    const now = performance.now();
    const known = keys.get(key);
    if (known && now - known.saidAt < everyMs) {
      known.unsaid += 1;
      return undefined;
    }
    // Deleted and set again, so the Map's order stays the order the keys were last said in.
    keys.delete(key);
    if (keys.size >= maxKeys) keys.delete(keys.keys().next().value as string);
    keys.set(key, { saidAt: now, unsaid: 0 });
    return known?.unsaid ?? 0;
  };
}

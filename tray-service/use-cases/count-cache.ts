/**
 * A short-lived, per-instance memo of each user's record count, used only for `totalPages`.
 * Counting a user's records is the costliest part of a history page (on FerretDB a full scan; on
 * MongoDB one index entry per record), while a client walking its pages asks for the same count
 * again and again. `totalPages` may thus lag new records by up to `ttlMs` on the page walk; the
 * records themselves are always read fresh, and delete-all forgets the caller's counts at once.
 */
export interface CountCache {
  get(key: string, now: number, load: () => Promise<number>): Promise<number>;
  forget(prefix: string): void;
  /** How many forgets it keeps for loads still running: none once no load runs. */
  remembered(): number;
}

export function createCountCache(ttlMs: number, maxEntries = 10_000): CountCache {
  const entries = new Map<string, { value: number; expires: number }>();
  // A count loaded while its key was forgotten (a delete-all committing while a history page of
  // the same user counted) is answered but not kept: kept, it outlived the delete-all by the TTL.
  // Forgets are numbered, and remembered (oldest first) only as long as a load that started
  // before them still runs, so under steady load the list holds the last moments' forgets only.
  let sequence = 0;
  /** Loads in flight, by the number of the last forget before they started (oldest first). */
  const loads = new Map<number, number>();
  const forgotten = new Map<string, number>();
  const settle = (started: number) => {
    const left = (loads.get(started) ?? 1) - 1;
    if (left > 0) loads.set(started, left);
    else loads.delete(started);
    const oldest = loads.keys().next().value;
    for (const [prefix, at] of forgotten) {
      if (oldest !== undefined && at > oldest) break;
      forgotten.delete(prefix);
    }
  };
  return {
    async get(key, now, load) {
      const hit = entries.get(key);
      if (hit && hit.expires > now) return hit.value;
      const started = sequence;
      loads.set(started, (loads.get(started) ?? 0) + 1);
      let value: number;
      try {
        value = await load();
      } catch (error) {
        settle(started);
        throw error;
      }
      const stale = [...forgotten].some(([prefix, at]) => at > started && key.startsWith(prefix));
      settle(started);
      if (stale) return value;
      entries.delete(key);
      // Map keeps insertion order: the first key is the oldest, dropped when full.
      if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
      entries.set(key, { value, expires: now + ttlMs });
      return value;
    },
    forget(prefix) {
      sequence += 1;
      if (loads.size > 0) {
        // Moved to the end: the list stays in the order of the forgets.
        forgotten.delete(prefix);
        forgotten.set(prefix, sequence);
      }
      for (const key of entries.keys()) if (key.startsWith(prefix)) entries.delete(key);
    },
    remembered: () => forgotten.size,
  };
}

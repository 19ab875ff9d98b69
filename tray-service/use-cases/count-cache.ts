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
}

export function createCountCache(ttlMs: number, maxEntries = 10_000): CountCache {
  const entries = new Map<string, { value: number; expires: number }>();
  // A count loaded while its key was forgotten (a delete-all committing while a history page of
  // the same user counted) is answered but not kept: kept, it outlived the delete-all by the TTL.
  // Forgets are remembered only while some load runs, by the order they came in.
  let sequence = 0;
  let loading = 0;
  const forgotten = new Map<string, number>();
  return {
    async get(key, now, load) {
      const hit = entries.get(key);
      if (hit && hit.expires > now) return hit.value;
      const started = sequence;
      loading += 1;
      let value: number;
      try {
        value = await load();
      } finally {
        loading -= 1;
      }
      const stale = [...forgotten].some(([prefix, at]) => at > started && key.startsWith(prefix));
      if (loading === 0) forgotten.clear();
      if (stale) return value;
      entries.delete(key);
      // Map keeps insertion order: the first key is the oldest, dropped when full.
      if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
      entries.set(key, { value, expires: now + ttlMs });
      return value;
    },
    forget(prefix) {
      sequence += 1;
      if (loading > 0) forgotten.set(prefix, sequence);
      for (const key of entries.keys()) if (key.startsWith(prefix)) entries.delete(key);
    },
  };
}

/**
 * Serialises work on the same keys inside one process. Compare-and-set keeps records correct
 * across processes; this only spares a process's own concurrent jobs from colliding on a hot
 * record (a popular post) and retrying. Keys are taken in sorted order, so two jobs never wait
 * for each other in a cycle.
 */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<void>>();

  async run<T>(keys: readonly string[], work: () => Promise<T>): Promise<T> {
    const releases: (() => void)[] = [];
    try {
      for (const key of [...new Set(keys)].sort()) {
        const previous = this.#tails.get(key) ?? Promise.resolve();
        let release: () => void = () => undefined;
        const held = new Promise<void>((resolve) => (release = resolve));
        const tail = previous.then(() => held);
        this.#tails.set(key, tail);
        releases.push(() => {
          release();
          if (this.#tails.get(key) === tail) this.#tails.delete(key);
        });
        await previous;
      }
      return await work();
    } finally {
      for (const release of releases) release();
    }
  }

  /** Keys currently held or waited for (for tests). */
  get size(): number {
    return this.#tails.size;
  }
}

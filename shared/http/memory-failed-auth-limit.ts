import { addressKey, type FailedAuthLimit } from './failed-auth-limit.ts';

export interface MemoryFailedAuthLimitOptions {
  /** Failed attempts an address may make per window; the next one refuses it. */
  points: number;
  /** The window, and how long an address over the limit is refused. */
  windowMs: number;
  /** Most addresses remembered at once: the memory the limit may take, whoever sends what. */
  maxAddresses: number;
  /** Epoch ms; tests pin it. */
  now?: () => number;
}

export interface MemoryFailedAuthLimit extends FailedAuthLimit {
  /** Addresses remembered now (at most maxAddresses). */
  readonly addresses: number;
}

interface Count {
  failures: number;
  /** The window opens at an address's first failure and ends windowMs later. */
  windowEndsAt: number;
  /** Set once the address is over the limit: refused until then. */
  blockedUntil: number;
}

/**
 * Failed authentications per address, counted in this process's memory only: for a service with
 * no Redis of its own to count in (the receiver, whose Redis is its queue's). Same rule as the
 * tray's Redis count: `points` failures per window, the next one refuses the address for a whole
 * window. Memory is bounded: at `maxAddresses` the oldest count goes, so a flood from more
 * addresses than that costs no more memory (per-address counting cannot hold such a flood back
 * anyway); counts whose window and refusal are over go as new ones come.
 */
export function createMemoryFailedAuthLimit(options: MemoryFailedAuthLimitOptions): MemoryFailedAuthLimit {
  const now = options.now ?? Date.now;
  // Insertion order is the order windows opened (a count is re-inserted when its window opens again),
  // so the front holds the oldest: the first to lapse, and the first to go when the map is full.
  const counts = new Map<string, Count>();
  const lapsed = (count: Count, at: number) => count.windowEndsAt <= at && count.blockedUntil <= at;

  // From the front: counts that have lapsed, then, while the map is full, the oldest. Each count is
  // dropped once, so a failure costs the same however many addresses are remembered.
  const makeRoom = (at: number) => {
    for (const [key, count] of counts) {
      if (counts.size < options.maxAddresses && !lapsed(count, at)) return;
      counts.delete(key);
    }
  };

  return {
    points: options.points,
    get addresses() {
      return counts.size;
    },
    blockedFor(address) {
      // Asked on every guarded request: with nothing counted (the usual case), nothing is parsed.
      if (counts.size === 0) return 0;
      const key = addressKey(address);
      const count = counts.get(key);
      if (count === undefined) return 0;
      const at = now();
      if (count.blockedUntil > at) return count.blockedUntil - at;
      if (lapsed(count, at)) counts.delete(key);
      return 0;
    },
    failed(address) {
      const key = addressKey(address);
      const at = now();
      let count = counts.get(key);
      if (count === undefined || lapsed(count, at)) {
        counts.delete(key);
        makeRoom(at);
        count = { failures: 0, windowEndsAt: at + options.windowMs, blockedUntil: 0 };
        counts.set(key, count);
      }
      count.failures += 1;
      if (count.failures > options.points) count.blockedUntil = at + options.windowMs;
      return Promise.resolve(Math.max(0, count.blockedUntil - at));
    },
  };
}

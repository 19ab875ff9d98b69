import TinyQueue from 'tinyqueue';

/** The longest delay setTimeout keeps (2^31 - 1 ms); a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * When each user's counts are due again although nothing was published: the first expiry of the
 * records they counted (docs/live-tray.md). One timer for every user, armed for the earliest time
 * of a binary heap (tinyqueue), so ten thousand streams cost one timer and a heap, not a timer each.
 */
export interface RecountSchedule {
  /** The user is due at `at` (epoch ms), replacing an earlier time; undefined: never. */
  set(userId: string, at: number | undefined): void;
  /** Users with a time set. */
  readonly size: number;
  /** Times held in the heap, those replaced or unset and not yet dropped included. */
  readonly pending: number;
  stop(): void;
}

export interface RecountScheduleOptions {
  now: () => number;
  /** Users whose time has come, each once, together when due together. */
  due: (userIds: readonly string[]) => void;
  /**
   * Times are rounded up to a multiple of this, so users due within it are told together (their
   * counts read by one statement) and a little late, never early (default 1 s).
   */
  granularityMs?: number;
}

interface Entry {
  at: number;
  userId: string;
}

const byTime = (a: Entry, b: Entry) => a.at - b.at;

/** A time replaced or unset stays in the heap until it comes up: the heap is rebuilt past this. */
const STALE_SLACK = 64;

export function createRecountSchedule(options: RecountScheduleOptions): RecountSchedule {
  const { now, due } = options;
  const granularity = options.granularityMs ?? 1_000;
  /** Each user's current time: a heap entry is live only while it matches. */
  const times = new Map<string, number>();
  let heap = new TinyQueue<Entry>([], byTime);
  let timer: NodeJS.Timeout | undefined;
  let armedFor: number | undefined;
  let stopped = false;

  const live = (entry: Entry) => times.get(entry.userId) === entry.at;

  /** The time at the top of the heap; when it is empty, later than any. */
  const nextAt = () => heap.peek()?.at ?? Infinity;

  /** Drops the replaced entries once they outnumber the live ones. */
  function compact(): void {
    if (heap.length <= times.size * 2 + STALE_SLACK) return;
    heap = new TinyQueue<Entry>(
      [...times].map(([userId, at]) => ({ at, userId })),
      byTime,
    );
  }

  function arm(): void {
    for (let top = heap.peek(); top && !live(top); top = heap.peek()) heap.pop();
    const next = heap.peek()?.at;
    if (next === armedFor) return;
    clearTimeout(timer);
    armedFor = next;
    if (next === undefined || stopped) return;
    timer = setTimeout(fire, Math.min(Math.max(0, next - now()), MAX_TIMER_MS));
    timer.unref();
  }

  function fire(): void {
    armedFor = undefined;
    const at = now();
    const users: string[] = [];
    while (nextAt() <= at) {
      const entry = heap.pop();
      if (!entry || !live(entry)) continue;
      times.delete(entry.userId);
      users.push(entry.userId);
    }
    // Early (a clock that moved back) or beyond setTimeout's reach: armed again for what remains.
    arm();
    if (users.length > 0) due(users);
  }

  return {
    set(userId, at) {
      if (stopped) return;
      if (at === undefined) {
        times.delete(userId);
      } else {
        const rounded = Math.ceil(at / granularity) * granularity;
        if (times.get(userId) === rounded) return;
        times.set(userId, rounded);
        heap.push({ at: rounded, userId });
      }
      compact();
      arm();
    },
    get size() {
      return times.size;
    },
    get pending() {
      return heap.length;
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      times.clear();
      heap = new TinyQueue<Entry>([], byTime);
    },
  };
}

/** The longest delay setTimeout keeps (2^31 - 1 ms); a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * When each user's counts are due again although nothing was published: the first expiry of the
 * records they counted (docs/live-tray.md). One timer for every user, armed for the earliest time
 * of a binary heap, so ten thousand streams cost one timer and a heap, not a timer each.
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

/** A time replaced or unset stays in the heap until it comes up: the heap is rebuilt past this. */
const STALE_SLACK = 64;

export function createRecountSchedule(options: RecountScheduleOptions): RecountSchedule {
  const { now, due } = options;
  const granularity = options.granularityMs ?? 1_000;
  /** Each user's current time: a heap entry is live only while it matches. */
  const times = new Map<string, number>();
  const heap: Entry[] = [];
  let timer: NodeJS.Timeout | undefined;
  let armedFor: number | undefined;
  let stopped = false;

  const live = (entry: Entry) => times.get(entry.userId) === entry.at;

  /** The time at `index` of the heap; past its end, later than any. */
  const timeAt = (index: number) => heap[index]?.at ?? Infinity;

  function swap(a: number, b: number): void {
    const [first, second] = [heap[a], heap[b]];
    if (first === undefined || second === undefined) return;
    heap[a] = second;
    heap[b] = first;
  }

  function push(entry: Entry): void {
    heap.push(entry);
    let index = heap.length - 1;
    while (index > 0 && timeAt((index - 1) >> 1) > entry.at) {
      swap(index, (index - 1) >> 1);
      index = (index - 1) >> 1;
    }
  }

  function pop(): Entry | undefined {
    swap(0, heap.length - 1);
    const top = heap.pop();
    let index = 0;
    for (;;) {
      const left = index * 2 + 1;
      const child = timeAt(left + 1) < timeAt(left) ? left + 1 : left;
      if (timeAt(child) >= timeAt(index)) break;
      swap(index, child);
      index = child;
    }
    return top;
  }

  /** Drops the replaced entries once they outnumber the live ones. */
  function compact(): void {
    if (heap.length <= times.size * 2 + STALE_SLACK) return;
    heap.length = 0;
    for (const [userId, at] of times) push({ at, userId });
  }

  function arm(): void {
    while (heap[0] && !live(heap[0])) pop();
    const next = heap[0]?.at;
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
    while (timeAt(0) <= at) {
      const entry = pop();
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
        push({ at: rounded, userId });
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
      heap.length = 0;
    },
  };
}

/**
 * Time spent in named stages of the requests a bench drives one at a time (`bench:api --stages`).
 * Between `begin` and `end` every timed call adds to its stage's total for that request; `end`
 * files the totals under the request's name, so one table can show per route where a request's
 * time goes. Meaningful only while requests do not overlap; stages that overlap each other (two
 * statements at once) are each counted whole.
 */
export interface StageTimer {
  /** A request named `request` (e.g. its route) starts: later samples add to it. */
  begin(request: string): void;
  /** The request ends: its per-stage totals are filed. */
  end(): void;
  record(stage: string, ms: number): void;
  /** `fn`, timed under `stage` each time it is called (until its promise settles). */
  wrap<A extends unknown[], R>(stage: string, fn: (...args: A) => Promise<R>): (...args: A) => Promise<R>;
  /** `fn`, timed under `stage` for its synchronous run. */
  wrapSync<A extends unknown[], R>(stage: string, fn: (...args: A) => R): (...args: A) => R;
  /** The totals so far, request -> stage -> one total per request, and forgets them. */
  take(): Map<string, Map<string, number[]>>;
}

export function createStageTimer(): StageTimer {
  let filed = new Map<string, Map<string, number[]>>();
  let current: { request: string; totals: Map<string, number> } | undefined;
  const record = (stage: string, ms: number) => {
    if (current) current.totals.set(stage, (current.totals.get(stage) ?? 0) + ms);
  };
  return {
    begin(request) {
      current = { request, totals: new Map() };
    },
    end() {
      if (!current) return;
      const stages = filed.get(current.request) ?? new Map<string, number[]>();
      filed.set(current.request, stages);
      for (const [stage, ms] of current.totals) {
        const list = stages.get(stage) ?? [];
        stages.set(stage, list);
        list.push(ms);
      }
      current = undefined;
    },
    record,
    wrap:
      (stage, fn) =>
      async (...args) => {
        const started = performance.now();
        try {
          return await fn(...args);
        } finally {
          record(stage, performance.now() - started);
        }
      },
    wrapSync:
      (stage, fn) =>
      (...args) => {
        const started = performance.now();
        try {
          return fn(...args);
        } finally {
          record(stage, performance.now() - started);
        }
      },
    take() {
      const taken = filed;
      filed = new Map();
      return taken;
    },
  };
}

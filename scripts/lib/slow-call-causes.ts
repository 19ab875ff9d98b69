// Where the API's slow calls of `bench:api --stages` lost their time. A p99 is decided by the
// slowest 1% of calls, and a table of per-stage percentiles cannot say whether those calls were
// slow in SQL, in Redis, or outside any stage: each call's own stage totals can.
import { median } from './quantile.ts';
import { RATE_LIMIT_STAGE, SERVER_TOTAL_STAGE, STORAGE_STAGE_PREFIX } from './tray-api-stages.ts';

/** Why one slow call was slow. */
export type SlowCallCause = 'process' | 'sql' | 'redis' | 'outside' | 'handler';

/** In the order of the printed table, with its column titles. */
export const SLOW_CALL_CAUSES: readonly (readonly [SlowCallCause, string])[] = [
  ['sql', 'SQL late'],
  ['redis', 'Redis late'],
  ['process', 'SQL and Redis late together'],
  ['outside', 'outside the handler'],
  ['handler', 'elsewhere in the handler'],
];

/** A stage is late when it took this much longer than its median (ms). */
export const LATE_MS = 0.8;

export interface TimedCall {
  /** The request name the stage timer files the call under (requestName in tray-api-stages.ts). */
  route: string;
  /** The client's time of each counted call, in round order (ms). */
  api: readonly number[];
  /** A call is slow when the client timed it over this (ms). */
  slowOverMs: number;
}

export interface SlowCalls {
  calls: number;
  slow: number;
  byCause: Map<SlowCallCause, number>;
}

/**
 * Counts each call slower than its `slowOverMs` under the cause its stage totals show, comparing
 * each stage with its own median:
 * - SQL and the rate limit's Redis call both late: they run side by side, so the API process
 *   itself answered late (a collection, or it was not scheduled);
 * - only a storage read late, or only the Redis call;
 * - no stage late and the client waited more than LATE_MS past the server's own total: the time
 *   went on the hop or on waking a process, outside the handler;
 * - anything else: elsewhere in the handler.
 *
 * The client makes the calls one at a time, round after round in the job's order, so the k-th
 * request the stage timer filed under a route is the k-th call to that route; `stages` must hold
 * the counted rounds only (taken after the warm-up).
 */
export function slowCallCauses(
  calls: readonly TimedCall[],
  stages: ReadonlyMap<string, ReadonlyMap<string, readonly number[]>>,
): SlowCalls {
  const medians = new Map<string, Map<string, number>>();
  for (const [route, byStage] of stages) {
    medians.set(route, new Map([...byStage].map(([stage, values]) => [stage, median(values)])));
  }
  const byCause = new Map<SlowCallCause, number>(SLOW_CALL_CAUSES.map(([cause]) => [cause, 0]));
  const next = new Map<string, number>();
  const rounds = Math.max(0, ...calls.map((call) => call.api.length));
  let counted = 0;
  let slow = 0;
  for (let round = 0; round < rounds; round++) {
    for (const call of calls) {
      const index = next.get(call.route) ?? 0;
      next.set(call.route, index + 1);
      const ms = call.api[round];
      if (ms === undefined) continue;
      counted += 1;
      if (ms <= call.slowOverMs) continue;
      const byStage = stages.get(call.route);
      if (!byStage) throw new Error(`no stage times for ${call.route}`);
      const late = (stage: string) => {
        const value = byStage.get(stage)?.[index];
        return value !== undefined && value - (medians.get(call.route)?.get(stage) ?? 0) > LATE_MS;
      };
      const storageLate = [...byStage.keys()].some(
        (stage) => stage.startsWith(STORAGE_STAGE_PREFIX) && late(stage),
      );
      const redisLate = late(RATE_LIMIT_STAGE);
      const serverTotal = byStage.get(SERVER_TOTAL_STAGE)?.[index];
      if (serverTotal === undefined) throw new Error(`${call.route}: no server total for request ${index}`);
      const cause: SlowCallCause =
        storageLate && redisLate
          ? 'process'
          : storageLate
            ? 'sql'
            : redisLate
              ? 'redis'
              : ms - serverTotal > LATE_MS
                ? 'outside'
                : 'handler';
      byCause.set(cause, (byCause.get(cause) ?? 0) + 1);
      slow += 1;
    }
  }
  return { calls: counted, slow, byCause };
}

/** Markdown rows: per user, the slow calls and their causes. */
export function slowCallTable(rows: readonly { userId: string; slow: SlowCalls }[], over: string): string[] {
  return [
    `| calls over ${over} | calls | slow | ${SLOW_CALL_CAUSES.map(([, title]) => title).join(' | ')} |`,
    `| --- | --- | --- | ${SLOW_CALL_CAUSES.map(() => '---').join(' | ')} |`,
    ...rows.map(
      ({ userId, slow }) =>
        `| ${userId} | ${slow.calls} | ${slow.slow} | ${SLOW_CALL_CAUSES.map(([cause]) => slow.byCause.get(cause) ?? 0).join(' | ')} |`,
    ),
  ];
}

import { MINUTE_MS } from '../../../shared/time/durations.ts';
import type pg from 'pg';
import { groupCommit } from '../../../shared/async/group-commit.ts';
import { emptyLagBuckets, LAG_BUCKETS, lagBucket } from '../../domain/lag-histogram.ts';
import type { EventMinute, EventsPort, LagMinute } from '../port.ts';
import { ADD_COUNTS } from './rollup-sql.ts';
import { withoutNul } from './without-nul.ts';
import { withRetry } from './with-retry.ts';

/** Applied events recorded per statement at most. */
export const APPLIED_BATCH = 200;

interface Applied {
  key: string;
  receivedAt: Date;
  appliedAt: Date;
  /** The call's maker (EventsPort.markApplied), kept with the first mark. */
  by: string | null;
}

/**
 * Marks a batch applied and counts each first mark into its minute's lag histogram (the non-empty
 * buckets as a jsonb object), in one statement: the UPDATE takes only events not yet marked, so a retried or replayed job's mark
 * counts nothing, and only the rows it changed reach the histogram. Bucket numbers and minutes are
 * computed here from the one list of bounds (domain/lag-histogram.ts); the histogram rows are
 * written in minute order, so two batches never lock them crosswise. The mark keeps its maker
 * (`applied_by`): a call of the same maker whose earlier run committed (its answer lost, the batch
 * then run call by call, or the job run again) is told it made the mark, and counts nothing more.
 */
async function markApplied(pool: pg.Pool, batch: readonly Applied[]): Promise<boolean[]> {
  // A key given twice (two makers at once: a stalled job taken over, a replay while the job runs)
  // is marked by its first call, the one told it made the mark below.
  const byKey = new Map<string, Applied>();
  for (const item of batch) {
    const key = withoutNul(item.key);
    if (!byKey.has(key)) byKey.set(key, item);
  }
  const items = [...byKey].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const column = <T>(pick: (item: Applied) => T) => items.map(([, item]) => pick(item));
  const { rows } = await withRetry(() =>
    pool.query<{ key: string }>({
      name: 'tray_mark_applied',
      text: `WITH x AS (
               SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[], $4::int[], $5::bigint[],
                                    $6::text[])
                 AS x(key, applied_at, minute, bucket, lag_ms, applied_by)),
             applied AS (
               UPDATE stored_events e SET applied_at = x.applied_at, applied_by = x.applied_by FROM x
               WHERE e.key = x.key AND e.applied_at IS NULL AND e.expires_at > x.applied_at
               RETURNING e.key, e.expires_at),
             made AS (
               SELECT e.key FROM stored_events e JOIN x USING (key)
               WHERE e.applied_at IS NOT NULL AND e.applied_by = x.applied_by),
             lags AS (SELECT x.minute, x.bucket, x.lag_ms, a.expires_at FROM applied a JOIN x USING (key)),
             minutes AS (
               SELECT minute, sum(n)::int AS count, jsonb_object_agg(bucket, n) AS buckets, max(top) AS max_ms,
                 max(expires_at) AS expires_at
               FROM (SELECT minute, bucket, count(*)::int AS n, max(lag_ms) AS top, max(expires_at) AS expires_at
                     FROM lags GROUP BY 1, 2) b
               GROUP BY minute),
             counted AS (
               INSERT INTO stored_event_lag_minutes AS t (minute, count, buckets, max_ms, expires_at)
               SELECT minute, count, buckets, max_ms, expires_at FROM minutes ORDER BY minute
               ON CONFLICT (minute) DO UPDATE SET
                 count = t.count + excluded.count,
                 buckets = ${ADD_COUNTS('t.buckets', 'excluded.buckets')},
                 max_ms = greatest(t.max_ms, excluded.max_ms),
                 expires_at = greatest(t.expires_at, excluded.expires_at))
             SELECT key FROM applied UNION ALL SELECT key FROM made`,
      values: [
        items.map(([key]) => key),
        column((item) => item.appliedAt),
        column((item) => new Date(Math.floor(item.receivedAt.getTime() / MINUTE_MS) * MINUTE_MS)),
        column((item) => lagBucket(item.appliedAt.getTime() - item.receivedAt.getTime())),
        column((item) => Math.max(0, item.appliedAt.getTime() - item.receivedAt.getTime())),
        column((item) => item.by),
      ],
    }),
  );
  const marked = new Set(rows.map((row) => row.key));
  // A key given twice in one batch is marked once: by its first call.
  const first = new Set<string>();
  return batch.map((item) => {
    const key = withoutNul(item.key);
    if (!marked.has(key) || first.has(key)) return false;
    first.add(key);
    return true;
  });
}

/** The stored events' per-minute rollups on PostgreSQL: the lag marks, and both charts' reads. */
export function createPostgresEventRollups(
  pool: pg.Pool,
  clock: () => Date = () => new Date(),
): Pick<EventsPort, 'markApplied' | 'perMinute' | 'lagPerMinute'> {
  // Concurrent jobs mark their events together, as they store them (postgres-events.ts).
  const submit = groupCommit<Applied, boolean>((batch) => markApplied(pool, batch), {
    maxBatch: APPLIED_BATCH,
    maxInFlight: 2,
    isolateFailures: true,
  });
  return {
    async markApplied(event, appliedAt, by) {
      const [marked] = await submit([
        {
          key: event.key,
          receivedAt: event.receivedAt,
          appliedAt,
          by: by === undefined ? null : withoutNul(by),
        },
      ]);
      return marked ?? false;
    },

    async perMinute(since, until) {
      // One row a minute, its counts by name as jsonb: a day is 1,440 small rows to read and parse,
      // not 11,000 rows of (minute, name, count) (BENCHMARKS.md#events-console-npm-run-benchconsole).
      const { rows } = await pool.query<{ at: number; counts: Record<string, number> }>({
        name: 'tray_event_minutes',
        text: `SELECT extract(epoch FROM minute)::float8 * 1000 AS at, counts FROM stored_event_minutes
               WHERE minute >= $1 AND minute < $2 AND expires_at > $3 ORDER BY minute`,
        values: [since, until, clock()],
      });
      return rows.map((row): EventMinute => ({ minute: new Date(row.at), counts: row.counts }));
    },

    async lagPerMinute(since, until) {
      const { rows } = await pool.query<{
        at: number;
        count: number;
        buckets: Record<string, number>;
        max_ms: string;
      }>({
        name: 'tray_event_lag_minutes',
        text: `SELECT extract(epoch FROM minute)::float8 * 1000 AS at, count, buckets, max_ms
               FROM stored_event_lag_minutes
               WHERE minute >= $1 AND minute < $2 AND expires_at > $3 ORDER BY minute`,
        values: [since, until, clock()],
      });
      return rows.map((row): LagMinute => {
        // Stored sparse (the non-empty buckets); handed out whole.
        const buckets = emptyLagBuckets();
        for (const [bucket, count] of Object.entries(row.buckets)) {
          const index = Number(bucket);
          if (index >= 0 && index < LAG_BUCKETS) buckets[index] = count;
        }
        return { minute: new Date(row.at), count: row.count, buckets, maxMs: Number(row.max_ms) };
      });
    },
  };
}

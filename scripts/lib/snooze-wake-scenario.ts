import pg from 'pg';
import { DAY_MS } from '../../shared/time/durations.ts';
import { WAKE_BATCH } from '../../tray-service/worker/snooze-wake-loop.ts';
import { seedGroupInsert, type SeedGroup } from './seed-bench-records.ts';
import { openStream, type Stream } from './sse-client.ts';

/** `bench:stream`'s snooze scenario: what to snooze, for whom, and where their streams are open. */
export interface SnoozeWakeOptions {
  databaseUrl: string;
  /** The tray processes (API and worker each); the users' streams alternate between them. */
  trayPorts: readonly number[];
  token: (userId: string) => Promise<string>;
  snoozes: number;
  users: number;
  /** The snoozes end evenly within this window... */
  windowMs: number;
  /** ...which starts this long after the streams are open (the seeding must be done by then). */
  leadMs: number;
  say: (line: string) => void;
}

/** The target of the scenario: each record back on its user's stream this soon after its end (p99). */
const TARGET_MS = 1_000;
/** How long after the window's end a record may still arrive before it counts as missing. */
const GRACE_MS = 30_000;
/** Records claimed per statement by the bare-SQL baseline: as many as the wake loop claims. */
const BASELINE_BATCH = WAKE_BATCH;
const RETENTION_MS = 90 * DAY_MS;

const percentile = (sorted: readonly number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const n = (value: number) => value.toLocaleString('en-US');

/** Read and seen records of `users` users, snoozed until `firstEnd` + an even share of the window. */
function snoozedGroup(options: SnoozeWakeOptions, firstEnd: number): SeedGroup {
  const { snoozes, users, windowMs } = options;
  return {
    count: snoozes,
    user: `'u-z' || (i % ${users})`,
    lastUpdate: `${firstEnd - 3_600_000} + i`,
    read: 'true',
    seen: 'true',
    archivedAt: 'NULL::bigint',
    snoozedUntil: `${firstEnd} + (i::bigint * ${windowMs}) / ${snoozes}`,
  };
}

/**
 * The floor under the wake-ups: the storage's claim statement (due records by the snooze index,
 * oldest end first, FOR UPDATE SKIP LOCKED, woken unread and unseen) run by hand on a scratch copy
 * of the table holding the same number of records, all due, batch after batch until none is left.
 */
async function bareClaim(sql: pg.Pool, options: SnoozeWakeOptions): Promise<string> {
  await sql.query('CREATE TABLE bench_wake_scratch (LIKE tray_records INCLUDING ALL)');
  try {
    const due = Date.now() - options.windowMs - 1_000;
    await sql.query(seedGroupInsert(snoozedGroup(options, due), 'zb', RETENTION_MS, 'bench_wake_scratch'), [
      0,
      options.snoozes - 1,
      1,
    ]);
    await sql.query('VACUUM ANALYZE bench_wake_scratch');
    const batches: number[] = [];
    let woken = 0;
    const started = performance.now();
    for (;;) {
      const began = performance.now();
      const result = await sql.query(
        `UPDATE bench_wake_scratch t SET snoozed_until = NULL, has_read = false, is_seen = false,
           unread_at = t.snoozed_until, changed_at = $1
         FROM (SELECT user_id, key FROM bench_wake_scratch
               WHERE snoozed_until IS NOT NULL AND snoozed_until <= $1
               ORDER BY snoozed_until LIMIT $2 FOR UPDATE SKIP LOCKED) AS due
         WHERE t.user_id = due.user_id AND t.key = due.key
         RETURNING t.*`,
        [Date.now(), BASELINE_BATCH],
      );
      if (!result.rowCount) break;
      batches.push(performance.now() - began);
      woken += result.rowCount;
    }
    const seconds = (performance.now() - started) / 1000;
    batches.sort((x, y) => x - y);
    return (
      `  bare SQL: the claim statement by hand on a scratch copy woke ${n(woken)} due records in batches of ` +
      `${n(BASELINE_BATCH)} in ${seconds.toFixed(2)} s (${n(Math.round(woken / seconds))} a second; a batch p50 ` +
      `${percentile(batches, 50).toFixed(1)} ms, p99 ${percentile(batches, 99).toFixed(1)} ms)`
    );
  } finally {
    await sql.query('DROP TABLE bench_wake_scratch');
  }
}

/**
 * --snoozes records of --snooze-users users, read and seen, snoozed to end evenly within a window,
 * each user with a stream open on one of the tray processes: the time from each record's `until`
 * to its `record` event on its user's stream (the tray processes' wake-up, claim and announcement),
 * records announced more than once, and any left snoozed. Returns the report's lines and whether
 * the targets held.
 */
export async function snoozeWakeScenario(
  options: SnoozeWakeOptions,
): Promise<{ lines: string[]; ok: boolean }> {
  const { snoozes, users, windowMs, leadMs, trayPorts, say } = options;
  const sql = new pg.Pool({ connectionString: options.databaseUrl, max: 2 });
  sql.on('error', () => undefined);
  const streams: Stream[] = [];
  try {
    const baseline = await bareClaim(sql, options);

    const announced = new Map<string, number>();
    const arrivedAt = new Map<string, number>();
    for (let k = 0; k < users; k++) {
      streams.push(
        await openStream(
          `http://127.0.0.1:${trayPorts[k % trayPorts.length]}/notifications/v3/stream`,
          await options.token(`u-z${k}`),
          (event, data) => {
            if (event !== 'record') return;
            const key = (JSON.parse(data) as { v_tarid_uid: string }).v_tarid_uid;
            announced.set(key, (announced.get(key) ?? 0) + 1);
            if (!arrivedAt.has(key)) arrivedAt.set(key, Date.now());
          },
        ),
      );
    }
    const firstEnd = Date.now() + leadMs;
    const seeding = performance.now();
    await sql.query(seedGroupInsert(snoozedGroup(options, firstEnd), 'z', RETENTION_MS), [0, snoozes - 1, 1]);
    const seededIn = performance.now() - seeding;
    if (Date.now() >= firstEnd)
      throw new Error(
        `seeding the snoozes took ${Math.round(seededIn)} ms, past the first end: raise --snooze-lead`,
      );
    const ends = new Map(
      (
        await sql.query<{ key: string; until: number }>(
          "SELECT key, snoozed_until::float8 AS until FROM tray_records WHERE user_id LIKE 'u-z%'",
        )
      ).rows.map(({ key, until }) => [key, until]),
    );
    say(
      `snoozes: ${n(ends.size)} records seeded in ${(seededIn / 1000).toFixed(1)} s; the first ends in ${Math.round((firstEnd - Date.now()) / 1000)} s`,
    );

    const deadline = firstEnd + windowMs + GRACE_MS;
    let nextReport = Date.now() + 10_000;
    while (arrivedAt.size < ends.size && Date.now() < deadline) {
      await sleep(100);
      if (Date.now() >= nextReport) {
        say(`snoozes: ${n(arrivedAt.size)} of ${n(ends.size)} back on their streams`);
        nextReport += 10_000;
      }
    }
    // Time for a second announcement of the last records to arrive, if any were woken twice.
    await sleep(2_000);

    const late: number[] = [];
    for (const [key, at] of arrivedAt) {
      const until = ends.get(key);
      if (until !== undefined) late.push(at - until);
    }
    late.sort((x, y) => x - y);
    const twice = [...announced.values()].filter((count) => count > 1).length;
    const left = Number(
      (
        await sql.query<{ n: string }>(
          "SELECT count(*) AS n FROM tray_records WHERE user_id LIKE 'u-z%' AND snoozed_until IS NOT NULL",
        )
      ).rows[0]?.n ?? 0,
    );
    const p99 = percentile(late, 99);
    const allBack = late.length === ends.size;
    const ok = allBack && p99 <= TARGET_MS && twice === 0 && left === 0;
    const lines = [
      `snooze wake-ups: ${n(ends.size)} records of ${n(users)} users snoozed to end evenly within ${windowMs / 1000} s, a stream per user on ${trayPorts.length} tray processes:`,
      `  back on their user's stream: ${n(late.length)} of ${n(ends.size)}; after their until p50 ${Math.round(percentile(late, 50))} ms, p99 ${Math.round(p99)} ms, max ${Math.round(late.at(-1) ?? NaN)} ms - ${allBack && p99 <= TARGET_MS ? 'ok' : 'MISSED'} p99 <= ${TARGET_MS} ms`,
      `  announced more than once: ${twice}; left snoozed: ${left} - ${twice === 0 && left === 0 ? 'ok' : 'MISSED'} (none)`,
      baseline,
    ];
    return { lines, ok };
  } finally {
    for (const stream of streams) stream.close();
    await sql.end();
  }
}

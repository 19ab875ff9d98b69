import { spawnSync } from 'node:child_process';
import type pg from 'pg';
import { dirtyMegabytes } from './dirty-pages.ts';

/**
 * Records of one kind a bench seeds: `count` rows, row i (0-based) described by SQL expressions
 * over `i` (and, after the user and lastUpdate, over `u` and `lu`).
 */
export interface SeedGroup {
  count: number;
  user: string;
  lastUpdate: string;
  read: string;
  seen: string;
  /** An expression that is NULL for records not archived. */
  archivedAt: string;
  /** An expression that is NULL for records not snoozed. */
  snoozedUntil: string;
}

export interface SeedOptions {
  retentionMs: number;
  /** Rows per statement (a progress line after each). */
  batch: number;
  say: (line: string) => void;
}

const n = (value: number) => value.toLocaleString('en-US');
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * The INSERT of one group's rows i = $1, $1 + $3, ... up to $2, with a record's realistic shape;
 * `tag` keeps the target ids of different groups apart. `table`: tray_records or a copy of it.
 */
export function seedGroupInsert(
  group: SeedGroup,
  tag: string,
  retentionMs: number,
  table = 'tray_records',
): string {
  return `INSERT INTO ${table} (user_id, key, verb, target_id, target_type, target_name,
      last_action_id, feed, actors, actors_count, count_from, last_update, has_read, unread_at,
      changed_at, expires_at, is_seen, archived_at, snoozed_until)
    SELECT u, tray_record_key(v, t, u), v, t, 'post', 'Hiking Club', 'cm-' || i,
      '{"kind":"community","id":"c-hike","name":"Hiking Club"}',
      '[{"userId":"u-ana","name":"Ana","at":1},{"userId":"u-ben","name":"Ben","at":0}]', 2 + i % 5,
      lu - 5, lu, ${group.read}, lu, lu, lu + ${retentionMs}, ${group.seen}, ${group.archivedAt},
      ${group.snoozedUntil}
    FROM (SELECT i, u, lu, CASE WHEN i % 7 = 0 THEN 'mention' ELSE 'comment' END AS v, 'p${tag}-' || i AS t
          FROM (SELECT i, ${group.user} AS u, ${group.lastUpdate} AS lu
                FROM generate_series($1::int, $2::int, $3::int) i) a) s`;
}

/**
 * Seeds tray_records inside PostgreSQL (generate_series; a row at a time through the API would
 * take hours at 10,000,000), the way PostgreSQL's manual advises for a bulk load ("Populating a
 * Database"): the table's indexes are dropped, the rows inserted, and the same indexes built again
 * from their own definitions, then VACUUM ANALYZE (autovacuum off on the table meanwhile). Each statement inserts every group's rows
 * i = b, b + B, b + 2B, ... so every user's records are spread over the whole table, as records
 * written over months are. Prints progress after each statement.
 */
export async function seedBenchRecords(
  sql: pg.Pool,
  groups: SeedGroup[],
  options: SeedOptions,
): Promise<void> {
  const { say } = options;
  const total = groups.reduce((sum, group) => sum + group.count, 0);
  const statements = Math.max(1, Math.ceil(total / options.batch));
  const indexes = (
    await sql.query<{ name: string; definition: string }>(
      `SELECT indexname AS name, indexdef AS definition FROM pg_indexes
       WHERE schemaname = current_schema() AND tablename = 'tray_records' AND indexname <> 'tray_records_pkey'`,
    )
  ).rows;
  const primaryKey = (
    await sql.query<{ definition: string }>(
      `SELECT pg_get_constraintdef(oid) AS definition FROM pg_constraint
       WHERE conrelid = 'tray_records'::regclass AND conname = 'tray_records_pkey'`,
    )
  ).rows[0]?.definition;
  if (!primaryKey) throw new Error('seed: tray_records has no primary key (tray_records_pkey)');
  for (const index of indexes) await sql.query(`DROP INDEX ${index.name}`);
  await sql.query('ALTER TABLE tray_records DROP CONSTRAINT tray_records_pkey');
  // An automatic ANALYZE started by the load holds a snapshot from before its last statements, and
  // the VACUUM below would then leave those statements' pages not all-visible: counts on them
  // would read the table, not only the index. Back on after the VACUUM.
  await sql.query('ALTER TABLE tray_records SET (autovacuum_enabled = false)');

  const started = performance.now();
  let loaded = 0;
  const inserts = groups.map((group, tag) => seedGroupInsert(group, String(tag), options.retentionMs));
  for (let b = 0; b < statements; b++) {
    for (const [g, group] of groups.entries()) {
      if (b >= group.count) continue;
      const result = await sql.query(inserts[g] ?? '', [b, group.count - 1, statements]);
      loaded += result.rowCount ?? 0;
    }
    const elapsed = performance.now() - started;
    const rate = loaded / (elapsed / 1000);
    say(
      `  loaded ${n(loaded)} of ${n(total)} records (${Math.round((100 * loaded) / total)}%) in ${seconds(elapsed)}, ` +
        `${n(Math.round(rate))} a second, about ${seconds(((total - loaded) / rate) * 1000)} left`,
    );
  }
  if (loaded !== total) throw new Error(`seed: loaded ${loaded} records, expected ${total}`);

  // Index builds sort in memory up to this; the default (64 MB) spills 10,000,000 keys to disk.
  const client = await sql.connect();
  try {
    await client.query("SET maintenance_work_mem = '512MB'");
    for (const [what, statement] of [
      ['tray_records_pkey', `ALTER TABLE tray_records ADD CONSTRAINT tray_records_pkey ${primaryKey}`],
      ...indexes.map((index) => [index.name, index.definition] as const),
    ] as const) {
      const began = performance.now();
      await client.query(statement);
      say(`  built ${what} in ${seconds(performance.now() - began)}`);
    }
    const began = performance.now();
    await client.query('VACUUM ANALYZE tray_records');
    await client.query('ALTER TABLE tray_records RESET (autovacuum_enabled)');
    const pages = await client.query<{ visible: number; pages: number }>(
      "SELECT relallvisible AS visible, relpages AS pages FROM pg_class WHERE oid = 'tray_records'::regclass",
    );
    const { visible = 0, pages: all = 0 } = pages.rows[0] ?? {};
    say(
      `  VACUUM ANALYZE in ${seconds(performance.now() - began)}: ${n(visible)} of ${n(all)} pages all-visible`,
    );
    // The load leaves gigabytes in PostgreSQL's buffers and the kernel's page cache still to be
    // written; measured while that drains, the first user's calls (and the floor's) met the disk's
    // write-back, not the tray's own cost. A checkpoint and a sync finish it before anything is timed.
    const settling = performance.now();
    const dirty = dirtyMegabytes();
    await client.query('CHECKPOINT');
    spawnSync('sync', { stdio: 'ignore' });
    say(
      `  CHECKPOINT and sync in ${seconds(performance.now() - settling)}: file data not yet on disk ${dirty ?? '?'} MB before, ${dirtyMegabytes() ?? '?'} MB after`,
    );
  } finally {
    client.release();
  }
}

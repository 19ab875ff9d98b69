import type pg from 'pg';
import { inShrinkingBatches } from './shrinking-batches.ts';

/**
 * A table whose rows live past their own expiry while something still needs them: `keptUntil` is
 * an SQL expression over the row aliased `x` giving when that need ends (NULL: nothing needs it).
 */
export interface KeptTable {
  readonly table: string;
  readonly keptUntil: string;
}

/**
 * A table of kept actions (or group actors), each row of a record group named by two SQL
 * expressions over the row `x` (its target and verb): kept until the expiry of the group's newest
 * actor, one probe of tray_target_actors_newest (target, verb, at DESC, action_id DESC) that reads
 * a single row. No record built from the group's actions is newer than its newest action (a
 * record's lastUpdate is its newest counted action's time), so none outlives that actor's expiry.
 */
export const keptByGroup = (table: string, target: string, verb: string): KeptTable => ({
  table,
  keptUntil: `(SELECT n.expires_at FROM tray_target_actors n
               WHERE n.target_id = ${target} AND n.verb = ${verb}
               ORDER BY n.at DESC, n.action_id DESC LIMIT 1)`,
});

/**
 * The removals' tombstones: a tombstone voids what arrives after it, so it is kept until the latest
 * expiry of what could take a voided action again: the kept actions left on its post's thread (by
 * tray_group_actions_post; their rows carry their group's expiry once past their own), and for a
 * deleted community post its community's `post` group (one probe of tray_target_actors_newest,
 * as keptByGroup). A voided action dated that old makes a record of its own only expired.
 */
export const keptByThread = (table: string): KeptTable => ({
  table,
  keptUntil: `greatest(
                (SELECT max(t.expires_at) FROM tray_group_actions t WHERE t.post_id = x.post_id),
                (SELECT n.expires_at FROM tray_target_actors n
                 WHERE n.target_id = x.community_id AND n.verb = 'post'
                 ORDER BY n.at DESC, n.action_id DESC LIMIT 1))`,
});

/**
 * A table of what judges one user's records (mute spans): a row whose span ended at `end` (SQL
 * over `x`) is kept until the latest expiry among the user's records that count from before that
 * end, read through tray_records' primary key (user_id first). A record counts actions from its
 * countFrom on and only while it lives, so once none counting from before the end lives, nothing
 * the row judged can be counted again.
 */
export const keptByUserRecords = (table: string, end: string): KeptTable => ({
  table,
  keptUntil: `(SELECT max(r.expires_at) FROM tray_records r
               WHERE r.user_id = x.user_id AND r.count_from < ${end})`,
});

/**
 * The purge of rows kept past their own expiry (docs/storage.md#kept-actions-live-as-long-as-their-records):
 * a kept action goes only once its group's newest actor has expired too, since until then a record
 * may still count it (a removal computes the record again from the kept rows, new activity counts
 * every actor from the record's countFrom); a mute span only once no record it judges lives; a
 * tombstone only once nothing could take what it voids again. Reads
 * `batch` expired rows at a time from the table's expiry index, oldest first, skipping rows a
 * writer holds (SKIP LOCKED, as purgeInBatches); each row still needed gets the expiry of what
 * needs it instead of being deleted, so it leaves the expired range and the next batch and the
 * next purge read past it (each kept row is moved about once per retention it lives on, not every
 * hour). Returns how many rows went.
 */
export async function purgeKeptInBatches(
  pool: pg.Pool,
  kept: KeptTable,
  before: number,
  fullBatch: number,
): Promise<number> {
  const { table, keptUntil } = kept;
  // Each row's keep check is a look-up of its own (a tombstone's thread, a mute span's user's
  // records): rows whose checks are slow together (a thread of 50,000 kept actions and 1,000 of
  // its comments deleted) outlast the statement timeout, so batches shrink (inShrinkingBatches).
  return inShrinkingBatches(fullBatch, async (batch) => {
    const { rows } = await purgeBatch(pool, table, keptUntil, before, batch);
    return rows[0] ?? { read: 0, gone: 0 };
  });
}

function purgeBatch(pool: pg.Pool, table: string, keptUntil: string, before: number, batch: number) {
  return pool.query<{ read: number; gone: number }>(
    `-- purge ${table}
       WITH b AS MATERIALIZED (
         SELECT x.ctid AS row, coalesce(${keptUntil}, x.expires_at) AS keep
         FROM ${table} x WHERE x.expires_at <= $1 ORDER BY x.expires_at LIMIT $2
         FOR UPDATE OF x SKIP LOCKED),
       gone AS (DELETE FROM ${table} t USING b WHERE t.ctid = b.row AND b.keep <= $1 RETURNING 1),
       moved AS (UPDATE ${table} t SET expires_at = b.keep FROM b WHERE t.ctid = b.row AND b.keep > $1)
       SELECT (SELECT count(*) FROM b)::int AS read, (SELECT count(*) FROM gone)::int AS gone`,
    [before, batch],
  );
}

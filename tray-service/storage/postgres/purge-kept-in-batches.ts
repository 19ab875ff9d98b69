import type pg from 'pg';

/**
 * A table of kept actions (or group actors): each row belongs to a record group, named by two SQL
 * expressions over the row aliased `x` (its target and verb).
 */
export interface KeptTable {
  readonly table: string;
  readonly group: { readonly target: string; readonly verb: string };
}

/**
 * When the group of row `x` may go: the expiry of the group's newest actor, one probe of
 * tray_target_actors_newest (target, verb, at DESC, action_id DESC) that reads a single row. No
 * record built from the group's actions is newer than its newest action (a record's lastUpdate is
 * its newest counted action's time), so none outlives that actor's expiry; the row's own expiry
 * when the group has no actor left.
 */
const groupKeptUntil = ({ target, verb }: KeptTable['group']) =>
  `coalesce((SELECT n.expires_at FROM tray_target_actors n
             WHERE n.target_id = ${target} AND n.verb = ${verb}
             ORDER BY n.at DESC, n.action_id DESC LIMIT 1), x.expires_at)`;

/**
 * The purge of kept actions (docs/storage.md#kept-actions-live-as-long-as-their-records): a row
 * past its own expiry goes only once its group's newest actor has expired too, since until then a
 * record may still count it (a removal computes the record again from the kept rows, new activity
 * counts every actor from the record's countFrom). Reads `batch` expired rows at a time from the
 * table's expiry index, oldest first, skipping rows a writer holds (SKIP LOCKED, as
 * purgeInBatches); each row of a group that still lives gets the group's expiry instead of being
 * deleted, so it leaves the expired range and the next batch and the next purge read past it
 * (each kept row is moved about once per retention its group lives on, not every hour). Returns
 * how many rows went.
 */
export async function purgeKeptInBatches(
  pool: pg.Pool,
  kept: KeptTable,
  before: number,
  batch: number,
): Promise<number> {
  const { table } = kept;
  let purged = 0;
  for (;;) {
    const { rows } = await pool.query<{ read: number; gone: number }>(
      `-- purge ${table}
       WITH b AS MATERIALIZED (
         SELECT x.ctid AS row, ${groupKeptUntil(kept.group)} AS keep
         FROM ${table} x WHERE x.expires_at <= $1 ORDER BY x.expires_at LIMIT $2
         FOR UPDATE OF x SKIP LOCKED),
       gone AS (DELETE FROM ${table} t USING b WHERE t.ctid = b.row AND b.keep <= $1 RETURNING 1),
       moved AS (UPDATE ${table} t SET expires_at = b.keep FROM b WHERE t.ctid = b.row AND b.keep > $1)
       SELECT (SELECT count(*) FROM b)::int AS read, (SELECT count(*) FROM gone)::int AS gone`,
      [before, batch],
    );
    const [counts = { read: 0, gone: 0 }] = rows;
    purged += counts.gone;
    if (counts.read < batch) return purged;
  }
}

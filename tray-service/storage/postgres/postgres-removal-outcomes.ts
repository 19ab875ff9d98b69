import type pg from 'pg';
import type { RecordPosition } from '../../domain/page-cursor.ts';
import {
  summariseRemoval,
  type RemovalTally,
  type RecordCounts,
  type RemovalChangeKind,
} from '../../domain/removal-tray-change.ts';
import type { RemovalOutcomesPort } from '../port.ts';

/**
 * Records what one application of a removal event changed, in the caller's transaction (the one
 * that applied it, so the record is exactly what committed). Counts add to those of an earlier
 * application of the same event (a retried or replayed job finds nothing left and adds 0); the
 * changes are listed while fewer than REMOVAL_CHANGES_LISTED are.
 */
export async function recordRemovalOutcome(
  client: pg.PoolClient,
  eventKey: string,
  applied: { voided: number; tally: RemovalTally },
  expiresAt: number,
): Promise<void> {
  const earlier = await client.query<{ listed: number }>(
    'SELECT listed FROM tray_removal_outcomes WHERE event_key = $1 FOR UPDATE',
    [eventKey],
  );
  const { outcome, listed } = summariseRemoval(applied.voided, applied.tally, earlier.rows[0]?.listed ?? 0);
  await client.query(
    `INSERT INTO tray_removal_outcomes (event_key, voided, shrunk, replaced, removed, listed, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (event_key) DO UPDATE SET voided = tray_removal_outcomes.voided + excluded.voided,
       shrunk = tray_removal_outcomes.shrunk + excluded.shrunk,
       replaced = tray_removal_outcomes.replaced + excluded.replaced,
       removed = tray_removal_outcomes.removed + excluded.removed,
       listed = tray_removal_outcomes.listed + excluded.listed,
       expires_at = greatest(tray_removal_outcomes.expires_at, excluded.expires_at)`,
    [eventKey, outcome.voided, outcome.shrunk, outcome.replaced, outcome.removed, outcome.listed, expiresAt],
  );
  if (listed.length === 0) return;
  await client.query(
    `INSERT INTO tray_removal_changes (event_key, user_id, key, change, before, after, expires_at)
     SELECT $1, c.user_id, c.key, c.change, c.before, c.after, $7
     FROM unnest($2::text[], $3::text[], $4::text[], $5::jsonb[], $6::jsonb[]) AS c(user_id, key, change, before, after)
     ON CONFLICT DO NOTHING`,
    [
      eventKey,
      listed.map((change) => change.userId),
      listed.map((change) => change.key),
      listed.map((change) => change.change),
      listed.map((change) => JSON.stringify(change.before)),
      listed.map((change) => (change.after ? JSON.stringify(change.after) : null)),
      expiresAt,
    ],
  );
}

interface ChangeRow {
  user_id: string;
  key: string;
  change: RemovalChangeKind;
  before: RecordCounts;
  after: RecordCounts | null;
}

/** The recorded outcomes, read by the admin API (the primary keys serve both reads). */
export function createPostgresRemovalOutcomes(pool: pg.Pool): RemovalOutcomesPort {
  return {
    async outcome(eventKey) {
      const { rows } = await pool.query<{
        voided: number;
        shrunk: number;
        replaced: number;
        removed: number;
        listed: number;
      }>('SELECT voided, shrunk, replaced, removed, listed FROM tray_removal_outcomes WHERE event_key = $1', [
        eventKey,
      ]);
      return rows[0] && { ...rows[0] };
    },
    async changes(eventKey, limit, after?: RecordPosition) {
      const { rows } = await pool.query<ChangeRow>(
        `SELECT user_id, key, change, before, after FROM tray_removal_changes
         WHERE event_key = $1 AND ($2::text IS NULL OR (user_id, key) > ($2, $3))
         ORDER BY user_id, key LIMIT $4`,
        [eventKey, after?.userId ?? null, after?.key ?? '', limit + 1],
      );
      const items = rows.slice(0, limit).map((row) => ({
        userId: row.user_id,
        key: row.key,
        change: row.change,
        before: row.before,
        ...(row.after === null ? {} : { after: row.after }),
      }));
      const last = items.at(-1);
      return rows.length > limit && last
        ? { items, next: { userId: last.userId, key: last.key } }
        : { items };
    },
  };
}

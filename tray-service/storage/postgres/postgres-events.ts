import type pg from 'pg';
import type { PageKey } from '../../domain/page-cursor.ts';
import type { StoredEvent, StoredEventStatus } from '../../domain/stored-event.ts';
import type { EventOutcome, EventsFilter, EventsPage, EventsPort } from '../port.ts';
import { DAY_MS } from '../../../shared/time/durations.ts';
import { SqlConditions, type SqlQuery } from './sql-conditions.ts';
import { jsonWithoutNul, withoutNul } from './without-nul.ts';

interface EventRow {
  key: string;
  event: string;
  webhook: string;
  data: Record<string, unknown>;
  received_at: Date;
  stored_at: Date;
  status: StoredEventStatus;
  error: string | null;
}

const COLUMNS = 'key, event, webhook, data, received_at, stored_at, status, error';

/** Rows per round trip of `stream`: bounded memory, few round trips. */
export const STREAM_BATCH = 500;

function toEvent(row: EventRow): StoredEvent {
  return {
    key: row.key,
    event: row.event,
    data: row.data,
    webhook: row.webhook,
    receivedAt: row.received_at,
    storedAt: row.stored_at,
    status: row.status,
    ...(row.error === null ? {} : { error: row.error }),
  };
}

/** The admin filters as SQL, never matching an expired event (the purge may not have run yet). */
function filterConditions(filter: EventsFilter, now: Date): SqlConditions {
  const where = new SqlConditions().and((p) => `expires_at > ${p(now)}`);
  if (filter.event !== undefined) where.and((p) => `event = ${p(filter.event)}`);
  if (filter.webhook !== undefined) where.and((p) => `webhook = ${p(filter.webhook)}`);
  if (filter.status !== undefined) where.and((p) => `status = ${p(filter.status)}`);
  if (filter.since) where.and((p) => `received_at >= ${p(filter.since)}`);
  if (filter.until) where.and((p) => `received_at < ${p(filter.until)}`);
  return where;
}

/**
 * One page, newest first, strictly after `after` in (received_at DESC, key DESC) order: a keyset
 * page, read from one of the stored_events indexes whatever the filter, and one row more than
 * the page to tell whether another follows.
 */
export function eventsPageQuery(filter: EventsFilter, now: Date, limit: number, after?: PageKey): SqlQuery {
  const where = filterConditions(filter, now);
  if (after) where.and((p) => `(received_at, key) < (${p(after.at)}, ${p(after.id)})`);
  return {
    text: `SELECT ${COLUMNS} FROM stored_events ${where.where()}
           ORDER BY received_at DESC, key DESC LIMIT ${where.param(limit + 1)}`,
    values: where.values,
  };
}

export function createPostgresEvents(pool: pg.Pool, clock: () => Date = () => new Date()): EventsPort {
  async function list(filter: EventsFilter, limit: number, after?: PageKey): Promise<EventsPage> {
    const rows = (await pool.query<EventRow>(eventsPageQuery(filter, clock(), limit, after))).rows;
    const items = rows.slice(0, limit).map(toEvent);
    const last = items.at(-1);
    return rows.length > limit && last ? { items, next: { at: last.receivedAt, id: last.key } } : { items };
  }

  return {
    async store(event, outcome: EventOutcome, { retentionDays, now }) {
      // The late-join backfill reads community posts from the tray records' own tables, which
      // fanOutPosts fills: `outcome.communityPost` has nothing to add here.
      const key = withoutNul(event.key);
      const expiresAt = new Date(event.receivedAt.getTime() + retentionDays * DAY_MS);
      // Inserted once under its key: a redelivery changes nothing and reads the row as first
      // stored. An expired row still waiting for the purge counts as gone and is replaced.
      const stored = await pool.query<EventRow>(
        `INSERT INTO stored_events (key, event, webhook, data, received_at, stored_at, expires_at, status, error)
         VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8, $9)
         ON CONFLICT (key) DO UPDATE SET
           event = excluded.event, webhook = excluded.webhook, data = excluded.data,
           received_at = excluded.received_at, stored_at = excluded.stored_at,
           expires_at = excluded.expires_at, status = excluded.status, error = excluded.error
         WHERE stored_events.expires_at <= excluded.stored_at
         RETURNING ${COLUMNS}`,
        [
          key,
          withoutNul(event.event),
          withoutNul(event.webhook),
          JSON.stringify(jsonWithoutNul(event.data)),
          event.receivedAt,
          now,
          expiresAt,
          outcome.status,
          outcome.error === undefined ? null : withoutNul(outcome.error),
        ],
      );
      const row =
        stored.rows[0] ??
        (await pool.query<EventRow>(`SELECT ${COLUMNS} FROM stored_events WHERE key = $1`, [key])).rows[0];
      if (!row) throw new Error(`stored event ${key} vanished while it was being stored`);
      return toEvent(row);
    },

    list,

    async get(key) {
      const { rows } = await pool.query<EventRow>(
        `SELECT ${COLUMNS} FROM stored_events WHERE key = $1 AND expires_at > $2`,
        [key, clock()],
      );
      return rows[0] && toEvent(rows[0]);
    },

    async *stream(filter) {
      // Keyset pages instead of one query or a server-side cursor: each batch is one short
      // statement on a pooled connection, so a slow consumer of an export holds no connection
      // and no snapshot between batches.
      let after: PageKey | undefined;
      do {
        const page = await list(filter, STREAM_BATCH, after);
        yield* page.items;
        after = page.next;
      } while (after);
    },

    async count(filter) {
      const where = filterConditions(filter, clock());
      const { rows } = await pool.query<{ count: string }>(
        `SELECT count(*) FROM stored_events ${where.where()}`,
        where.values,
      );
      return Number(rows[0]?.count ?? 0);
    },
  };
}

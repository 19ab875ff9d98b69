import type pg from 'pg';
import type { PageKey } from '../../domain/page-cursor.ts';
import { RESTATABLE_STATUSES, type StoredEvent, type StoredEventStatus } from '../../domain/stored-event.ts';
import type { ModerationAction } from '../../domain/moderation-action.ts';
import type { EventOutcome, EventsFilter, EventsPort } from '../port.ts';
import { createPostgresEventRollups } from './postgres-event-rollups.ts';
import { ADD_COUNTS, MINUTE_OF } from './rollup-sql.ts';
import { groupCommit } from '../../../shared/async/group-commit.ts';
import { eventExpiry } from '../../domain/event-expiry.ts';
import { SqlConditions, type SqlQuery } from './sql-conditions.ts';
import { storableJson } from '../../domain/storable-json.ts';
import { withoutNul } from './without-nul.ts';
import { idWithinLimit } from '../../domain/event-id.ts';
import { streamEvents } from '../stream-events.ts';

interface EventRow {
  key: string;
  event: string;
  webhook: string;
  data: Record<string, unknown>;
  received_at: Date;
  stored_at: Date;
  expires_at: Date;
  status: StoredEventStatus;
  error: string | null;
  user_id: string | null;
  community_id: string | null;
  moderation: ModerationAction | 'none';
  applied_at: Date | null;
}

/** What a delivery brings; moderation and applied_at come later. */
const INSERTED = 'key, event, webhook, data, received_at, stored_at, status, error, user_id, community_id';
const COLUMNS = `${INSERTED}, expires_at, moderation, applied_at`;

function toEvent(row: EventRow): StoredEvent {
  return {
    key: row.key,
    event: row.event,
    data: row.data,
    webhook: row.webhook,
    receivedAt: row.received_at,
    storedAt: row.stored_at,
    expiresAt: row.expires_at,
    status: row.status,
    ...(row.error === null ? {} : { error: row.error }),
    ...(row.user_id === null ? {} : { userId: row.user_id }),
    ...(row.community_id === null ? {} : { communityId: row.community_id }),
    ...(row.moderation === 'none' ? {} : { moderation: row.moderation }),
    ...(row.applied_at === null ? {} : { appliedAt: row.applied_at }),
  };
}

/** The admin filters as SQL, never matching an expired event (the purge may not have run yet). */
function filterConditions(filter: EventsFilter, now: Date): SqlConditions {
  const where = new SqlConditions().and((p) => `expires_at > ${p(now)}`);
  if (filter.event !== undefined) where.and((p) => `event = ${p(filter.event)}`);
  if (filter.webhook !== undefined) where.and((p) => `webhook = ${p(filter.webhook)}`);
  if (filter.status !== undefined) where.and((p) => `status = ${p(filter.status)}`);
  if (filter.userId !== undefined) where.and((p) => `user_id = ${p(filter.userId)}`);
  if (filter.communityId !== undefined) where.and((p) => `community_id = ${p(filter.communityId)}`);
  // `moderation <> 'none'` spelled out, so the partial index stored_events_moderated_received,
  // whose predicate it is, serves every filter on a decided event.
  if (filter.moderation === 'none') where.and(() => `moderation = 'none'`);
  else if (filter.moderation === 'any') where.and(() => `moderation <> 'none'`);
  else if (filter.moderation !== undefined)
    where.and((p) => `moderation <> 'none' AND moderation = ${p(filter.moderation)}`);
  if (filter.since) where.and((p) => `received_at >= ${p(filter.since)}`);
  if (filter.until) where.and((p) => `received_at < ${p(filter.until)}`);
  return where;
}

/** Strictly after `after` in (received_at DESC, key DESC) order. */
const afterCondition = (p: (value: unknown) => string, after: PageKey) =>
  `(received_at, key) < (${p(after.at)}, ${p(after.id)})`;

/**
 * One page, newest first, strictly after `after` in (received_at DESC, key DESC) order: a keyset
 * page, read from one of the stored_events indexes whatever the filter, and one row more than
 * the page to tell whether another follows.
 */
export function eventsPageQuery(
  filter: EventsFilter,
  now: Date,
  limit: number,
  after?: PageKey,
  maxBytes?: number,
): SqlQuery {
  const where = filterConditions(filter, now);
  if (after) where.and((p) => afterCondition(p, after));
  const order = `ORDER BY received_at DESC, key DESC`;
  const limited = `${where.where()} ${order} LIMIT ${where.param(limit + 1)}`;
  if (maxBytes === undefined)
    return { text: `SELECT ${COLUMNS} FROM stored_events ${limited}`, values: where.values };
  // The page's rows in order with the bytes up to each; those past maxBytes (but the first) stay
  // in the database: only the rows sent are read whole (a payload stored out of line is fetched
  // when sent). `fetched` says how many the page had, so the caller knows more follow. A row
  // without data_bytes (stored before 0021) counts its stored size.
  return {
    text: `SELECT ${COLUMNS}, fetched FROM (
             SELECT p.*, sum(p.bytes) OVER (${order}) AS running, count(*) OVER () AS fetched
             FROM (SELECT ${COLUMNS}, coalesce(data_bytes, pg_column_size(data)) AS bytes
                   FROM stored_events ${limited}) p) q
           WHERE q.running <= ${where.param(maxBytes)} OR q.running = q.bytes
           ${order}`,
    values: where.values,
  };
}

/** One call of `store`. */
interface StoreCall {
  event: Omit<StoredEvent, 'storedAt' | 'expiresAt' | 'status' | 'error'>;
  outcome: EventOutcome;
  retentionDays: number;
  now: Date;
}

/** Events per INSERT at most. */
export const STORE_BATCH = 200;

/**
 * Stores the calls' events with one INSERT, each key once (the first call of a key brings its
 * event) and in key order, so two batches never lock each other's rows crosswise. Returns one
 * event per call, as first stored under its key. A redelivery changes nothing; an expired row
 * still waiting for the purge counts as gone and is replaced.
 */
async function storeEvents(pool: pg.Pool, calls: readonly StoreCall[]): Promise<StoredEvent[]> {
  const rows = new Map<string, EventRow>();
  for (const { event, outcome, retentionDays, now } of calls) {
    const key = withoutNul(event.key);
    if (rows.has(key)) continue;
    rows.set(key, {
      key,
      event: event.event,
      webhook: event.webhook,
      data: event.data,
      received_at: event.receivedAt,
      stored_at: now,
      expires_at: eventExpiry(event.receivedAt, now, retentionDays),
      status: outcome.status,
      error: outcome.error ?? null,
      // A longer id (which no valid event names) would not fit user_id's or community_id's index.
      user_id: idWithinLimit(outcome.userId) ?? null,
      community_id: idWithinLimit(outcome.communityId) ?? null,
      moderation: 'none',
      applied_at: null,
    });
  }
  const text = JSON.stringify([...rows.values()]);
  // Nearly no event holds U+0000: it is looked for in the JSON text, and only a batch that has
  // one is walked to replace it (walking every payload cost more than the insert).
  if (text.includes('\\u0000'))
    for (const [key, row] of rows)
      rows.set(key, {
        ...row,
        event: withoutNul(row.event),
        webhook: withoutNul(row.webhook),
        data: storableJson(row.data),
        error: row.error === null ? null : withoutNul(row.error),
        user_id: row.user_id === null ? null : withoutNul(row.user_id),
        community_id: row.community_id === null ? null : withoutNul(row.community_id),
      });
  // Only the keys come back: a row inserted is the row sent, so no payload is printed by the
  // server and parsed again here. The same statement counts the events it stored into their
  // minutes (the events-per-minute rollup): one statement, so a count never misses or repeats an
  // event, and the minute rows are locked in minute order, after the events' rows.
  const inserted = await pool.query<{ key: string }>({
    name: 'tray_store_events',
    text: `WITH stored AS (
             INSERT INTO stored_events (${INSERTED}, expires_at, data_bytes)
             SELECT ${INSERTED}, expires_at, pg_column_size(data) FROM jsonb_to_recordset($1::jsonb) AS x(key text, event text,
               webhook text, data jsonb, received_at timestamptz, stored_at timestamptz, status text,
               error text, user_id text, community_id text, expires_at timestamptz)
             ORDER BY key COLLATE "C"
             ON CONFLICT (key) DO UPDATE SET
               event = excluded.event, webhook = excluded.webhook, data = excluded.data,
               received_at = excluded.received_at, stored_at = excluded.stored_at,
               expires_at = excluded.expires_at, status = excluded.status, error = excluded.error,
               user_id = excluded.user_id, community_id = excluded.community_id,
               moderation = 'none', applied_at = NULL, data_bytes = excluded.data_bytes
             WHERE stored_events.expires_at <= excluded.stored_at
             RETURNING key, event, received_at, expires_at),
           per_name AS (
             SELECT ${MINUTE_OF('received_at')} AS minute, event, count(*)::int AS n, max(expires_at) AS expires_at
             FROM stored GROUP BY 1, 2),
           counted AS (
             INSERT INTO stored_event_minutes AS m (minute, counts, expires_at)
             SELECT minute, jsonb_object_agg(event, n), max(expires_at) FROM per_name
             GROUP BY minute ORDER BY minute
             ON CONFLICT (minute) DO UPDATE SET
               counts = ${ADD_COUNTS('m.counts', 'excluded.counts')},
               expires_at = greatest(m.expires_at, excluded.expires_at))
           SELECT key FROM stored`,
    values: [text.includes('\\u0000') ? JSON.stringify([...rows.values()]) : text],
  });
  const stored = new Map<string, EventRow>();
  for (const { key } of inserted.rows) {
    const row = rows.get(key);
    if (row) stored.set(key, row);
  }
  const kept = [...rows.keys()].filter((key) => !stored.has(key));
  if (kept.length > 0) {
    const found = await pool.query<EventRow>({
      name: 'tray_stored_events_by_key',
      text: `SELECT ${COLUMNS} FROM stored_events WHERE key = ANY($1::text[])`,
      values: [kept],
    });
    for (const row of found.rows) stored.set(row.key, row);
  }
  return calls.map(({ event }) => {
    const row = stored.get(withoutNul(event.key));
    if (!row) throw new Error(`stored event ${event.key} vanished while it was being stored`);
    return toEvent(row);
  });
}

export function createPostgresEvents(pool: pg.Pool, clock: () => Date = () => new Date()): EventsPort {
  // Concurrent jobs store their events together: one INSERT for every call that arrives while
  // earlier ones are in flight, instead of a statement (and a commit) per job.
  const storeBatch = groupCommit<StoreCall, StoredEvent>((calls) => storeEvents(pool, calls), {
    maxBatch: STORE_BATCH,
    maxInFlight: 2,
    isolateFailures: true,
  });

  const list: EventsPort['list'] = async (filter, limit, after, options) => {
    const maxBytes = options?.maxBytes;
    const rows = (
      await pool.query<EventRow & { fetched?: string }>(
        eventsPageQuery(filter, clock(), limit, after, maxBytes),
      )
    ).rows;
    const items = rows.slice(0, limit).map(toEvent);
    const last = items.at(-1);
    // More follow: the page had a row past `limit`, or rows past maxBytes left behind.
    const more = rows.length > limit || Number(rows[0]?.fetched ?? 0) > rows.length;
    return more && last ? { items, next: { at: last.receivedAt, id: last.key } } : { items };
  };

  const rollups = createPostgresEventRollups(pool);
  async function get(key: string): Promise<StoredEvent | undefined> {
    const { rows } = await pool.query<EventRow>(
      `SELECT ${COLUMNS} FROM stored_events WHERE key = $1 AND expires_at > $2`,
      // Keys are stored without U+0000 (without-nul.ts): one asked with it is looked up as stored,
      // instead of failing the statement (a 500 the admin API's fuzzing found).
      [withoutNul(key), clock()],
    );
    return rows[0] && toEvent(rows[0]);
  }
  return {
    ...rollups,
    store: (event, outcome, options) =>
      storeBatch([{ event, outcome, ...options }]).then((stored) => stored[0] as StoredEvent),

    list,

    get,

    async restate(key, outcome, now) {
      const nullable = (text: string | undefined) => (text === undefined ? null : withoutNul(text));
      const { rows } = await pool.query<EventRow>({
        name: 'tray_restate_event',
        text: `UPDATE stored_events SET status = $2, error = $3, user_id = $4, community_id = $5
               WHERE key = $1 AND expires_at > $6 AND status = ANY($7::text[])
               RETURNING ${COLUMNS}`,
        values: [
          withoutNul(key),
          outcome.status,
          nullable(outcome.error),
          nullable(idWithinLimit(outcome.userId)),
          nullable(idWithinLimit(outcome.communityId)),
          now,
          RESTATABLE_STATUSES,
        ],
      });
      // None changed: another replay restated it first, or it expired.
      return rows[0] ? toEvent(rows[0]) : get(key);
    },

    stream: (filter, after) => streamEvents(list, filter, after),

    async count(filter, after, atMost) {
      const where = filterConditions(filter, clock());
      if (after) where.and((p) => afterCondition(p, after));
      const values = [...where.values];
      const limit = atMost === undefined ? '' : `LIMIT $${values.push(atMost)}`;
      const { rows } = await pool.query<{ count: string }>(
        `SELECT count(*) FROM (SELECT 1 FROM stored_events ${where.where()} ${limit}) matches`,
        values,
      );
      return Number(rows[0]?.count ?? 0);
    },
  };
}

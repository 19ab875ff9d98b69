import type pg from 'pg';
import type { PageKey } from '../../domain/page-cursor.ts';
import type { DeliveryState, ModerationDecisionDoc } from '../../domain/decision-doc.ts';
import type { ModerationAction } from '../../domain/moderation-action.ts';
import type { DecisionsFilter, DecisionsPort } from '../port.ts';
import { SqlConditions, type SqlQuery } from './sql-conditions.ts';
import { outcomesByEvent } from '../../domain/event-moderation.ts';
import { withoutNul } from './without-nul.ts';
import { withRetry } from './with-retry.ts';

interface DecisionRow {
  id: string;
  event_key: string;
  event: string;
  event_received_at: Date;
  rule: string;
  action: ModerationAction;
  reason: string;
  subject_type: string;
  subject_id: string;
  user_id: string | null;
  decided_at: Date;
  expires_at: Date;
  delivery: DeliveryState;
  delivery_attempts: number;
  delivered_at: Date | null;
  last_error: string | null;
}

const COLUMNS = `id, event_key, event, event_received_at, rule, action, reason, subject_type, subject_id,
  user_id, decided_at, expires_at, delivery, delivery_attempts, delivered_at, last_error`;

/**
 * A decision saved again: one expired whose event was stored anew (a redelivery after the
 * retention, a replay: a later expiry) is new, as it would be had the purge removed it first; any
 * other keeps everything but a later expiry. An expiry that passed during a job that kept its
 * event (not stored anew: the same expiry) makes nothing new.
 */
const EXPIRED = 'd.expires_at <= EXCLUDED.decided_at AND d.expires_at < EXCLUDED.expires_at';
const SAVED_AGAIN = COLUMNS.split(',')
  .map((column) => column.trim())
  .filter((column) => column !== 'id')
  .map((column) =>
    column === 'expires_at'
      ? `expires_at = CASE WHEN ${EXPIRED} THEN EXCLUDED.expires_at ELSE GREATEST(d.expires_at, EXCLUDED.expires_at) END`
      : `${column} = CASE WHEN ${EXPIRED} THEN EXCLUDED.${column} ELSE d.${column} END`,
  )
  .join(',\n    ');

/** The longest error text kept with a decision (a failed delivery's answer can be a whole page). */
const MAX_ERROR = 500;

function toDecision(row: DecisionRow): ModerationDecisionDoc {
  return {
    id: row.id,
    eventKey: row.event_key,
    event: row.event,
    eventReceivedAt: row.event_received_at,
    rule: row.rule,
    action: row.action,
    reason: row.reason,
    subject: { type: row.subject_type, id: row.subject_id },
    ...(row.user_id === null ? {} : { userId: row.user_id }),
    decidedAt: row.decided_at,
    expiresAt: row.expires_at,
    delivery: row.delivery,
    deliveryAttempts: row.delivery_attempts,
    ...(row.delivered_at === null ? {} : { deliveredAt: row.delivered_at }),
    ...(row.last_error === null ? {} : { lastError: row.last_error }),
  };
}

/** One page, newest first (decided_at, then id), a keyset page on one of the decision indexes. */
export function decisionsPageQuery(filter: DecisionsFilter, limit: number, after?: PageKey): SqlQuery {
  const where = new SqlConditions();
  if (filter.rule !== undefined) where.and((p) => `rule = ${p(filter.rule)}`);
  if (filter.action !== undefined) where.and((p) => `action = ${p(filter.action)}`);
  if (filter.userId !== undefined) where.and((p) => `user_id = ${p(filter.userId)}`);
  if (filter.eventKey !== undefined) where.and((p) => `event_key = ${p(filter.eventKey)}`);
  if (filter.eventReceivedAt) where.and((p) => `event_received_at = ${p(filter.eventReceivedAt)}`);
  if (filter.delivery !== undefined) where.and((p) => `delivery = ${p(filter.delivery)}`);
  if (filter.since) where.and((p) => `decided_at >= ${p(filter.since)}`);
  if (filter.until) where.and((p) => `decided_at < ${p(filter.until)}`);
  if (after) where.and((p) => `(decided_at, id) < (${p(after.at)}, ${p(after.id)})`);
  return {
    text: `SELECT ${COLUMNS} FROM moderation_decisions ${where.where()}
           ORDER BY decided_at DESC, id DESC LIMIT ${where.param(limit + 1)}`,
    values: where.values,
  };
}

export function createPostgresDecisions(pool: pg.Pool): DecisionsPort {
  return {
    async saveAll(decisions) {
      // One statement for the batch; each id once and in key order, so two workers saving
      // overlapping batches lock rows in the same order and never deadlock.
      const byId = new Map(decisions.map((decision) => [decision.id, decision]));
      const batch = [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      if (batch.length === 0) return;
      const column = <T>(pick: (decision: ModerationDecisionDoc) => T) => batch.map(pick);
      // Texts from the event (an invalid one is moderated too: its ids may hold U+0000) or from a
      // rule: stored as the event is, or the statement would fail the job on every attempt.
      // A decision saved again keeps everything it has, but a later expiry, unless it expired
      // (SAVED_AGAIN).
      // The decided events' outcome, in the same statement: it only ever grows more severe, so
      // saving decisions again (a re-moderated event) leaves it as it is.
      const outcomes = [...outcomesByEvent(batch)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      await withRetry(() =>
        pool.query(
          `WITH saved AS (
             INSERT INTO moderation_decisions AS d (${COLUMNS})
             SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::text[],
               $7::text[], $8::text[], $9::text[], $10::text[], $11::timestamptz[], $12::timestamptz[],
               $13::text[], $14::integer[], $15::timestamptz[], $16::text[])
             ON CONFLICT (id) DO UPDATE SET ${SAVED_AGAIN}
               WHERE ${EXPIRED} OR d.expires_at < EXCLUDED.expires_at)
           UPDATE stored_events e SET moderation = o.action
           FROM unnest($17::text[], $18::text[]) AS o(key, action)
           WHERE e.key = o.key AND e.moderation <> o.action
             AND (e.moderation = 'none' OR o.action = 'ban-request')`,
          [
            column((d) => d.id),
            column((d) => d.eventKey),
            column((d) => withoutNul(d.event)),
            column((d) => d.eventReceivedAt),
            column((d) => withoutNul(d.rule)),
            column((d) => d.action),
            column((d) => withoutNul(d.reason)),
            column((d) => withoutNul(d.subject.type)),
            column((d) => withoutNul(d.subject.id)),
            column((d) => (d.userId === undefined ? null : withoutNul(d.userId))),
            column((d) => d.decidedAt),
            column((d) => d.expiresAt),
            column((d) => d.delivery),
            column((d) => d.deliveryAttempts),
            column((d) => d.deliveredAt ?? null),
            column((d) => d.lastError ?? null),
            outcomes.map(([key]) => withoutNul(key)),
            outcomes.map(([, action]) => action),
          ],
        ),
      );
    },

    async pendingAmong(ids) {
      const { rows } = await pool.query<{ id: string }>(
        `SELECT id FROM moderation_decisions WHERE id = ANY($1::text[]) AND delivery = 'pending' ORDER BY id`,
        [[...ids]],
      );
      return rows.map((row) => row.id);
    },

    async get(id) {
      const { rows } = await pool.query<DecisionRow>(
        `SELECT ${COLUMNS} FROM moderation_decisions WHERE id = $1`,
        [id],
      );
      return rows[0] && toDecision(rows[0]);
    },

    async list(filter, limit, after) {
      const rows = (await pool.query<DecisionRow>(decisionsPageQuery(filter, limit, after))).rows;
      const items = rows.slice(0, limit).map(toDecision);
      const last = items.at(-1);
      return rows.length > limit && last ? { items, next: { at: last.decidedAt, id: last.id } } : { items };
    },

    async markDelivered(id, attempts, at) {
      await pool.query(
        `UPDATE moderation_decisions
         SET delivery = 'delivered', delivery_attempts = $2, delivered_at = $3, last_error = NULL
         WHERE id = $1`,
        [id, attempts, at],
      );
    },

    async markAttemptFailed(id, attempts, error, final) {
      // `delivery <> 'delivered'`: a late failure report never undoes a delivery that succeeded.
      await pool.query(
        `UPDATE moderation_decisions
         SET delivery_attempts = $2, last_error = $3, delivery = CASE WHEN $4 THEN 'failed' ELSE delivery END
         WHERE id = $1 AND delivery <> 'delivered'`,
        [id, attempts, withoutNul(error.slice(0, MAX_ERROR)), final],
      );
    },
  };
}

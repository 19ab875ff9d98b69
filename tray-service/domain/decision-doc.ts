import { createHash } from 'node:crypto';
import type { ModerationDecision } from './moderation-rule.ts';
import type { ModerationAction } from './moderation-action.ts';
import { idWithinLimit } from './event-id.ts';

/** `off`: no MODERATION_WEBHOOK_URL when decided; `failed`: every delivery attempt failed. */
export const deliveryStates = ['off', 'pending', 'delivered', 'failed'] as const;
export type DeliveryState = (typeof deliveryStates)[number];

export interface ModerationDecisionDoc {
  /** decisionId(): the same rule deciding about the same content of the same event gives the same id. */
  id: string;
  eventKey: string;
  event: string;
  eventReceivedAt: Date;
  rule: string;
  action: ModerationAction;
  reason: string;
  subject: { type: string; id: string };
  userId?: string;
  decidedAt: Date;
  /**
   * When storage drops it: its event's expiry (StoredEvent.expiresAt), so a decision about a
   * user's content is kept exactly as long as the content itself. The purge leaves a decision
   * still `pending` delivery until it is delivered or given up.
   */
  expiresAt: Date;
  delivery: DeliveryState;
  deliveryAttempts: number;
  deliveredAt?: Date;
  lastError?: string;
}

/** Deterministic, so storing a re-moderated event's decisions is idempotent (at-least-once delivery). */
export function decisionId(eventKey: string, rule: string, subject: { type: string; id: string }): string {
  return createHash('sha256')
    .update(JSON.stringify([eventKey, rule, subject.type, subject.id]))
    .digest('hex')
    .slice(0, 32);
}

export function toDecisionDoc(
  event: { key: string; event: string; receivedAt: Date; expiresAt: Date },
  rule: string,
  decision: ModerationDecision,
  options: { now: Date; delivery: 'off' | 'pending' },
): ModerationDecisionDoc {
  // A user id over MAX_EVENT_ID_LENGTH comes only from an invalid event, which is still moderated
  // (docs/decisions.md); the userId indexes could not hold it, so saving would fail the job on
  // every attempt. Dropped, as storage drops such an event's acting user; the decision stays.
  // The subject id is indexed nowhere (the decision id hashes it), so it is kept: it names the content.
  const userId = idWithinLimit(decision.userId);
  return {
    id: decisionId(event.key, rule, decision.subject),
    eventKey: event.key,
    event: event.event,
    eventReceivedAt: event.receivedAt,
    rule,
    action: decision.action,
    reason: decision.reason,
    subject: decision.subject,
    ...(userId === undefined ? {} : { userId }),
    decidedAt: options.now,
    expiresAt: event.expiresAt,
    delivery: options.delivery,
    deliveryAttempts: 0,
  };
}

/** The public shape, in the admin API and in deliveries to MODERATION_WEBHOOK_URL. */
export function toDecisionView(doc: ModerationDecisionDoc) {
  return {
    id: doc.id,
    eventKey: doc.eventKey,
    event: doc.event,
    eventReceivedAt: doc.eventReceivedAt.toISOString(),
    rule: doc.rule,
    action: doc.action,
    reason: doc.reason,
    subject: doc.subject,
    ...(doc.userId === undefined ? {} : { userId: doc.userId }),
    decidedAt: doc.decidedAt.toISOString(),
    delivery: doc.delivery,
    deliveryAttempts: doc.deliveryAttempts,
    ...(doc.deliveredAt === undefined ? {} : { deliveredAt: doc.deliveredAt.toISOString() }),
    ...(doc.lastError === undefined ? {} : { lastError: doc.lastError }),
  };
}

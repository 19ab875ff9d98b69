import { z } from 'zod';
import { moderationActions, type ModerationAction } from './moderation-action.ts';
import type { StoredEvent } from './stored-event.ts';
import { mostSevere } from './event-moderation.ts';

/** One rule's finding about one piece of content of an event. */
export interface ModerationDecision {
  action: ModerationAction;
  /** Human-readable, e.g. `blocklisted words: "spam"`. */
  reason: string;
  /**
   * What the decision is about, e.g. { type: 'comment', id: 'cm-7' }. A rule's decisions about one
   * subject are taken as one (checkedDecisions).
   */
  subject: { type: string; id: string };
  /** The user responsible for the content (author), when the event names one. */
  userId?: string;
}

/**
 * The plugin interface: a rule is a pure function of a stored event (no I/O), so rules are easy
 * to test and safe to re-run: the moderation step stores each decision once per event.
 */
export interface ModerationRule {
  /** Stable name, part of each decision's id: renaming a rule re-decides old events. */
  readonly name: string;
  evaluate(event: StoredEvent): ModerationDecision[];
}

const decisionShape = z.object({
  action: z.enum(moderationActions),
  reason: z.string(),
  subject: z.object({ type: z.string().min(1), id: z.string().min(1) }),
  userId: z.string().optional(),
});

/**
 * What a rule's `evaluate` answered, checked: a rule is code an operator adds, run from source with
 * no type check, so an `async evaluate` (a Promise), a decision without a subject or with an
 * action no one acts on must be refused as that rule's fault, not fail the event's job on every
 * attempt. `problem` names what is wrong; then no decision of the rule is taken.
 */
export function checkedDecisions(answer: unknown): { decisions: ModerationDecision[] } | { problem: string } {
  if (!Array.isArray(answer))
    return {
      problem:
        answer instanceof Promise
          ? 'evaluate returned a Promise: a rule decides synchronously, from the event alone'
          : `evaluate returned ${answer === null ? 'null' : typeof answer}, not an array of decisions`,
    };
  const bySubject = new Map<string, ModerationDecision>();
  for (const [index, decision] of answer.entries()) {
    const parsed = decisionShape.safeParse(decision);
    if (!parsed.success) {
      const [issue] = parsed.error.issues;
      const path = [index, ...(issue?.path ?? [])].join('.');
      return { problem: `decision ${path}: ${issue?.message ?? 'invalid'}` };
    }
    const subject = JSON.stringify([parsed.data.subject.type, parsed.data.subject.id]);
    const earlier = bySubject.get(subject);
    bySubject.set(subject, earlier ? merged(earlier, parsed.data) : parsed.data);
  }
  return { decisions: [...bySubject.values()] };
}

/**
 * Two decisions of one rule about one subject, as the one a decision's id allows (one per event,
 * rule and subject): the most severe action, each distinct reason in order, the first user named.
 * Stored as given, one engine kept the first and the other the last.
 */
function merged(a: ModerationDecision, b: ModerationDecision): ModerationDecision {
  const reasons = a.reason.split('; ');
  return {
    action: mostSevere(a.action, b.action) ?? a.action,
    reason: reasons.includes(b.reason) ? a.reason : `${a.reason}; ${b.reason}`,
    subject: a.subject,
    ...(a.userId !== undefined ? { userId: a.userId } : b.userId !== undefined ? { userId: b.userId } : {}),
  };
}

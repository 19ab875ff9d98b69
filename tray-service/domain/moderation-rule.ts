import { z } from 'zod';
import { moderationActions, type ModerationAction } from './moderation-action.ts';
import type { StoredEvent } from './stored-event.ts';

/** One rule's finding about one piece of content of an event. */
export interface ModerationDecision {
  action: ModerationAction;
  /** Human-readable, e.g. `blocklisted words: "spam"`. */
  reason: string;
  /** What the decision is about, e.g. { type: 'comment', id: 'cm-7' }; unique within the event. */
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
  const decisions: ModerationDecision[] = [];
  for (const [index, decision] of answer.entries()) {
    const parsed = decisionShape.safeParse(decision);
    if (!parsed.success) {
      const [issue] = parsed.error.issues;
      const path = [index, ...(issue?.path ?? [])].join('.');
      return { problem: `decision ${path}: ${issue?.message ?? 'invalid'}` };
    }
    decisions.push(parsed.data);
  }
  return { decisions };
}

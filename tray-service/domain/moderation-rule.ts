import type { ModerationAction } from './moderation-action.ts';
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

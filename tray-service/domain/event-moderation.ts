import { moderationActions, type ModerationAction } from './moderation-action.ts';

/**
 * The admin filter on an event's moderation outcome: `none` (no decision about it), `any` (at
 * least one), or one action: the event's most severe decision is that action (docs/operations.md#stored-events).
 */
export const moderationFilters = ['none', 'any', ...moderationActions] as const;
export type ModerationFilter = (typeof moderationFilters)[number];

/** Later is more severe: a ban request outweighs a flag. */
const severity: Record<ModerationAction, number> = { flag: 1, 'ban-request': 2 };

/** The more severe of two outcomes (undefined: no decision). */
export function mostSevere(
  a: ModerationAction | undefined,
  b: ModerationAction | undefined,
): ModerationAction | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return severity[b] > severity[a] ? b : a;
}

/** The most severe action of each event's decisions, by event key. */
export function outcomesByEvent(
  decisions: Iterable<{ eventKey: string; action: ModerationAction }>,
): Map<string, ModerationAction> {
  const outcomes = new Map<string, ModerationAction>();
  for (const { eventKey, action } of decisions) {
    outcomes.set(eventKey, mostSevere(outcomes.get(eventKey), action) ?? action);
  }
  return outcomes;
}

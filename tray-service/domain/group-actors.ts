import type { ActorAction } from './actor-action.ts';
import type { ActorSnapshot } from './actor-snapshot.ts';
import type { Activity } from './activity.ts';
import { awayForAction, type MembershipEdge } from './membership-intervals.ts';
import { processedOf, type KeptActivity } from './kept-activity.ts';
import { compareCodePoints } from './code-point-order.ts';
import { partitionPoint } from '../../shared/arrays/partition-point.ts';

const MAX_NAMED_ACTORS = 3;

/**
 * The distinct actors of one record group, each at their latest action, newest first: what every
 * recipient's record of the group is computed from. Pure.
 */
export interface GroupActors {
  readonly actions: readonly ActorAction[];
  /** Each actor's position in `actions`. */
  readonly rank: ReadonlyMap<string, number>;
}

/**
 * Orders actions by time, then by id (in code point order, as SQL and MongoDB compare them) so
 * equal times still have one order.
 */
export function compareActions(
  a: { at: number; actionId: string },
  b: { at: number; actionId: string },
): number {
  if (a.at !== b.at) return a.at - b.at;
  return Math.sign(compareCodePoints(a.actionId, b.actionId));
}

/** Keeps each actor's latest action (the store may briefly hold older ones) and sorts newest first. */
export function groupActors(actions: Iterable<ActorAction>): GroupActors {
  const latest = new Map<string, ActorAction>();
  for (const action of actions) {
    const seen = latest.get(action.actor.userId);
    if (!seen || compareActions(action, seen) > 0) latest.set(action.actor.userId, action);
  }
  const sorted = [...latest.values()].sort((a, b) => compareActions(b, a));
  return { actions: sorted, rank: new Map(sorted.map((action, index) => [action.actor.userId, index])) };
}

export interface CountedActors {
  /** The newest three, newest first, as snapshots for the record. */
  named: ActorSnapshot[];
  count: number;
}

/**
 * The actors a recipient's record counts: those whose latest action is at or after `countFrom`,
 * the recipient excluded (nobody is notified of their own action). A binary search finds the cut,
 * so a fan-out to thousands of members costs a few steps per member, not a pass over the group.
 */
export function countedActors(group: GroupActors, countFrom: number, recipientId: string): CountedActors {
  const { actions, rank } = group;
  // Newest first: the actions at or after countFrom come before the first older one.
  const low = partitionPoint(actions, (action) => action.at >= countFrom);
  const named: ActorSnapshot[] = [];
  for (let index = 0; index < low && named.length < MAX_NAMED_ACTORS; index++) {
    const action = actions[index] as ActorAction;
    if (action.actor.userId !== recipientId) named.push({ ...action.actor, at: action.at });
  }
  const own = rank.get(recipientId);
  return { named, count: low - (own !== undefined && own < low ? 1 : 0) };
}

export interface ExactActors extends CountedActors {
  /** The newest counted action: what the record's latest fields come from when its own fell while away. */
  newest: Activity | undefined;
}

/**
 * The actors a record of a community's target counts when its recipient was away at some time
 * since `countFrom` (docs/tray-rules.md#leaving-and-rejoining-a-community): from the group's kept
 * actions, those at or after `countFrom`, by others than the recipient, addressed to them (or to
 * the whole community), that the recipient was not away for by their joins and leaves (`edges`)
 * and the actions' places in the processing order (awayFor: a leave processed after an action
 * takes nothing back); each actor at their latest such action, named as that action shows them.
 * Pure.
 */
export function exactActors(
  actions: Iterable<KeptActivity>,
  countFrom: number,
  recipientId: string,
  edges: readonly MembershipEdge[],
): ExactActors {
  const latest = new Map<string, Activity>();
  for (const action of actions) {
    if (action.at < countFrom || action.actor.userId === recipientId) continue;
    if (action.audience.kind === 'user' && action.audience.userId !== recipientId) continue;
    if (awayForAction(edges, action, processedOf(action))) continue;
    const seen = latest.get(action.actor.userId);
    if (!seen || compareActions(asAction(action), asAction(seen)) > 0)
      latest.set(action.actor.userId, action);
  }
  const sorted = [...latest.values()].sort((a, b) => compareActions(asAction(b), asAction(a)));
  return {
    named: sorted.slice(0, MAX_NAMED_ACTORS).map((action) => ({ ...action.actor, at: action.at })),
    count: sorted.length,
    newest: sorted[0],
  };
}

const asAction = (activity: Activity) => ({ at: activity.at, actionId: activity.lastActionId });

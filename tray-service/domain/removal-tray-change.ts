import type { ActorSnapshot } from './actor-snapshot.ts';
import { compareCodePoints } from './code-point-order.ts';

/** What a removal's record looked like on one side of it: what the event detail compares. */
export interface RecordCounts {
  actorsCount: number;
  /** The user ids of the record's latest actors (at most 3), newest first. */
  actorIds: string[];
  /** The action the record names (its newest). */
  lastActionId: string;
}

/**
 * How one record a removal touched changed (docs/operations.md#what-a-removal-changed):
 * `shrunk`, fewer actors or a different three of them; `replaced`, the same actors but the action
 * it names was another; `removed`, no action was left so the record went.
 */
export type RemovalChangeKind = 'shrunk' | 'replaced' | 'removed';

export interface RemovalTrayChange {
  userId: string;
  key: string;
  change: RemovalChangeKind;
  before: RecordCounts;
  /** Absent when the record was removed. */
  after?: RecordCounts;
}

/** What one removal event changed in the trays, recorded when the worker applied it. */
export interface RemovalOutcome {
  /** Kept actions the removal took out (0: the action had not arrived, or had expired). */
  voided: number;
  shrunk: number;
  replaced: number;
  removed: number;
  /** Changes kept to be listed: the first REMOVAL_CHANGES_LISTED in (user, key) order. */
  listed: number;
}

/**
 * Changes listed per removal event. A deleted post may change 100,000 trays: every change is
 * counted, but only this many are kept to show, so what a removal stores stays bounded.
 */
export const REMOVAL_CHANGES_LISTED = 1_000;

/** A record's counts as the detail shows them. Pure. */
export function recordCounts(record: {
  actorsCount: number;
  actors: readonly Pick<ActorSnapshot, 'userId'>[];
  lastActionId: string;
}): RecordCounts {
  return {
    actorsCount: record.actorsCount,
    actorIds: record.actors.map((actor) => actor.userId),
    lastActionId: record.lastActionId,
  };
}

/** The change from `before` to `after` (undefined: the record went). Pure. */
export function removalChange(
  identity: { userId: string; key: string },
  before: RecordCounts,
  after: RecordCounts | undefined,
): RemovalTrayChange {
  if (!after) return { ...identity, change: 'removed', before };
  const sameActors =
    after.actorsCount === before.actorsCount && after.actorIds.join('\n') === before.actorIds.join('\n');
  return { ...identity, change: sameActors ? 'replaced' : 'shrunk', before, after };
}

/** By code point, the order storage lists the kept changes in (code-point-order.ts). */
const byUserAndKey = (a: RemovalTrayChange, b: RemovalTrayChange) =>
  compareCodePoints(a.userId, b.userId) || compareCodePoints(a.key, b.key);

/**
 * What a removal changed, gathered as it goes: every change counted, and only the first
 * REMOVAL_CHANGES_LISTED in (user, key) order kept (all a listing can take), so a deleted post of a
 * community of millions is summed up in bounded memory, a part of its members at a time.
 */
export interface RemovalTally {
  shrunk: number;
  replaced: number;
  removed: number;
  /** At most REMOVAL_CHANGES_LISTED, in (user, key) order. */
  first: RemovalTrayChange[];
}

export const EMPTY_REMOVAL_TALLY: RemovalTally = { shrunk: 0, replaced: 0, removed: 0, first: [] };

/** `tally` with `changes` added. Pure. */
export function tallyRemovalChanges(
  changes: readonly RemovalTrayChange[],
  tally: RemovalTally = EMPTY_REMOVAL_TALLY,
): RemovalTally {
  const added = { ...tally, first: [...tally.first, ...changes].sort(byUserAndKey) };
  added.first.length = Math.min(added.first.length, REMOVAL_CHANGES_LISTED);
  for (const change of changes) added[change.change] += 1;
  return added;
}

/**
 * The outcome of one application of a removal event, and the changes of it to list: the first in
 * (user, key) order while fewer than REMOVAL_CHANGES_LISTED are listed already (`alreadyListed`,
 * from an earlier application of the same event: a retried job's). Pure.
 */
export function summariseRemoval(
  voided: number,
  { shrunk, replaced, removed, first }: RemovalTally,
  alreadyListed = 0,
): { outcome: RemovalOutcome; listed: RemovalTrayChange[] } {
  const listed = first.slice(0, Math.max(0, REMOVAL_CHANGES_LISTED - alreadyListed));
  return { outcome: { voided, shrunk, replaced, removed, listed: listed.length }, listed };
}

import type { Db } from 'mongodb';
import type { MembershipChange } from '../../../domain/activity.ts';
import { applyMembershipChanges } from '../memberships/membership-changes.ts';
import { backfillJoins } from './backfill-join.ts';
import { recomputeRacedLeaves } from '../grouping/recompute-raced-leaves.ts';
import type { GroupingOptions } from '../grouping/write-deliveries.ts';

/**
 * The storage port's applyMemberships on MongoDB: stores the joins and leaves with their places in
 * the processing order (`first`, when the caller took them; else taken here), then adds to each
 * joiner what the join lets in. A leave changes no record processed before it: it only stops what
 * is processed after it (its place), so a leave processed late takes nothing back
 * (docs/tray-rules.md#leaving-and-rejoining-a-community); what a write that took its place after the
 * leave's yet ran before the leave was stored counted is judged by the places (recomputeRacedLeaves).
 */
export async function applyMemberships(
  db: Db,
  changes: readonly MembershipChange[],
  options: GroupingOptions & { first?: number },
): Promise<void> {
  const now = (options.now ?? Date.now)();
  const placed = await applyMembershipChanges(db, changes, {
    retentionDays: options.retentionDays,
    now,
    ...(options.first === undefined ? {} : { first: options.first }),
  });
  // After the joins are stored: a post whose fan-out missed them is then found here (its event
  // was stored before its fan-out read the memberships), or its fan-out saw them. Events older
  // than their own retention are purged, so the records' retention bounds how far back it reads.
  await backfillJoins(db, changes, { ...options, eventsRetentionDays: Infinity });
  // A write that took its place after a leave's, before the leave was stored, and counted what the
  // leave covers: its member's records computed again by the places.
  await recomputeRacedLeaves(db, placed, options);
}

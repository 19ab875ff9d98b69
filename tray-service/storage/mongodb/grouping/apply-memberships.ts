import type { Db } from 'mongodb';
import type { MembershipChange } from '../../../domain/activity.ts';
import { applyMembershipChanges } from '../memberships/membership-changes.ts';
import { backfillJoins } from './backfill-join.ts';
import type { GroupingOptions } from './write-deliveries.ts';

/**
 * The storage port's applyMemberships on MongoDB: stores the joins and leaves with their places in
 * the processing order (`first`, when the caller took them; else taken here), then adds to each
 * joiner what the join lets in. A leave changes no record: it only stops what is processed after it
 * (its place), so a leave processed late takes nothing back
 * (docs/tray-rules.md#leaving-and-rejoining-a-community).
 */
export async function applyMemberships(
  db: Db,
  changes: readonly MembershipChange[],
  options: GroupingOptions & { first?: number },
): Promise<void> {
  const now = (options.now ?? Date.now)();
  await applyMembershipChanges(db, changes, {
    retentionDays: options.retentionDays,
    now,
    ...(options.first === undefined ? {} : { first: options.first }),
  });
  // After the joins are stored: a post whose fan-out missed them is then found here (its event
  // was stored before its fan-out read the memberships), or its fan-out saw them. Events older
  // than their own retention are purged, so the records' retention bounds how far back it reads.
  await backfillJoins(db, changes, { ...options, eventsRetentionDays: Infinity });
}

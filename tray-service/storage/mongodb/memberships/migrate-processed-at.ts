import type { Db } from 'mongodb';
import { MEMBERSHIP_CHANGES } from '../collections/collection-names.ts';
import { runOnce } from '../setup/run-once.ts';
import type { MembershipChangeDoc } from '../collections/membership-changes-collection.ts';

export const PROCESSED_AT = 'membership-processed-at';

/**
 * Gives membership changes stored before the tray kept their processing time the upgrade's time,
 * once per database, as PostgreSQL's migration 0018 does: later than they were processed, so the
 * prune keeps them until its cutoff is a day past the upgrade (a leave among them may have been
 * processed late; prunableChanges). Without it they would never be pruned. Runs at open, before
 * the worker takes jobs; run again by a second instance it changes nothing.
 */
export function migrateMembershipProcessedAt(db: Db, now = Date.now()): Promise<number> {
  return runOnce(db, PROCESSED_AT, () => giveChangesProcessedAt(db, now));
}

/**
 * Gives every membership change without a processing time `now`; returns how many. Once at open
 * (migrateMembershipProcessedAt), and before each purge: a worker of before the processing time
 * still running in a rolling upgrade stores changes without one after the pass ran.
 */
export async function giveChangesProcessedAt(db: Db, now: number): Promise<number> {
  const result = await db
    .collection<MembershipChangeDoc>(MEMBERSHIP_CHANGES)
    .updateMany({ processedAt: { $exists: false } }, { $set: { processedAt: now } });
  return result.modifiedCount;
}

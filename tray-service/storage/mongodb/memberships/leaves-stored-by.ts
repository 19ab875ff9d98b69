import type { Db } from 'mongodb';
import { MEMBERSHIP_CHANGES } from '../collections/collection-names.ts';
import type { MembershipChangeDoc } from '../collections/membership-changes-collection.ts';
import { nextProcessed } from './processing-order.ts';

/**
 * Notes on each stored leave a place in the processing order taken after it was stored
 * (`storedBy`), and returns each one's, by `_id`. A write takes its place before it reads the
 * memberships, so only one whose place is between the leave's and this can have read them without
 * the leave: the window in which recomputeRacedLeaves looks for raced writes. Without it a leave
 * delivered again long after would take every later write held back by it for a raced one and
 * compute the member's records again, which a leave never does
 * (docs/tray-rules.md#leaving-and-rejoining-a-community). The first job's place is kept; a leave
 * stored without one (a job stopped between the insert and this, or an older version) gets this
 * job's, later still, so wider and as safe. Any place taken after the insert bounds the window, so
 * two jobs noting it at once (FerretDB's conditional updates are not atomic) leave either's, both
 * right. One update (and at most one read) by `_id` equality each: FerretDB pushes no `$in` down.
 */
export async function leavesStoredBy(db: Db, ids: readonly string[]): Promise<Map<string, number>> {
  const bounds = new Map<string, number>();
  if (ids.length === 0) return bounds;
  const collection = db.collection<MembershipChangeDoc>(MEMBERSHIP_CHANGES);
  const place = await nextProcessed(db, 1);
  for (const _id of new Set(ids)) {
    const { matchedCount } = await collection.updateOne(
      { _id, storedBy: { $exists: false } },
      { $set: { storedBy: place } },
    );
    if (matchedCount === 1) {
      bounds.set(_id, place);
      continue;
    }
    const stored = await collection.findOne({ _id }, { projection: { _id: 0, storedBy: 1 } });
    bounds.set(_id, stored?.storedBy ?? place);
  }
  return bounds;
}

import type { Db } from 'mongodb';
import { MEMBERSHIPS } from '../collections/collection-names.ts';
import { ignoreDuplicates } from '../driver/ignore-duplicates.ts';
import type { MembershipDoc } from '../collections/memberships-collection.ts';
import { planMemberImport, type MemberRow } from './plan-member-import.ts';

export interface BatchCounts {
  inserted: number;
  updated: number;
  unchanged: number;
}

/**
 * One batch in two writes and no read: the batch's members inserted as new ones, then the list's
 * time added to those already there (a duplicate key), where they lack it. Counted as PostgreSQL
 * counts: inserted (new to the imports), updated (the list's time stored for a member imported
 * before), unchanged (that time stored already, or a repeat in the batch). A join or leave the
 * worker stores meanwhile is a change document of its own, folded with the import by time.
 */
export async function applyMemberBatch(
  db: Db,
  rows: readonly MemberRow[],
  asOf: number,
): Promise<BatchCounts> {
  const members = db.collection<MembershipDoc>(MEMBERSHIPS);
  const plan = planMemberImport(rows, asOf);
  if (plan.inserts.length === 0) return { inserted: 0, updated: 0, unchanged: plan.unchanged };
  const duplicates = await ignoreDuplicates(members.insertMany(plan.inserts, { ordered: false }));
  const counts: BatchCounts = {
    inserted: plan.inserts.length - duplicates.length,
    updated: 0,
    unchanged: plan.unchanged,
  };
  if (duplicates.length > 0) {
    const ids = duplicates.map((index) => (plan.inserts[index] as MembershipDoc)._id);
    // One command for the batch: FerretDB scans the collection for an `$in` as for a point query.
    // A document from before lists kept their times holds its list's time as an active
    // `updatedAt`: that time is not added again.
    const result = await members.updateMany(
      { _id: { $in: ids }, asOf: { $ne: asOf }, $or: [{ active: false }, { updatedAt: { $ne: asOf } }] },
      { $addToSet: { asOf } },
    );
    counts.updated = result.modifiedCount;
    counts.unchanged += ids.length - result.modifiedCount;
  }
  return counts;
}

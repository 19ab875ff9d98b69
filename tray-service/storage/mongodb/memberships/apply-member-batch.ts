import type { AnyBulkWriteOperation, Collection } from 'mongodb';
import { onlyDuplicateKeys } from '../compare-and-set/is-duplicate-key.ts';
import type { MembershipDoc } from './memberships-collection.ts';
import { planMemberImport, type MemberRow, type MemberState } from './plan-member-import.ts';

export interface BatchCounts {
  inserted: number;
  updated: number;
  unchanged: number;
}

/**
 * Reads the memberships stored as left, once, before the import: the only existing documents an
 * import may change. Everything else is an insert-if-absent, so the import needs no per-row read
 * (FerretDB answers each point query with a scan; one scan in total keeps a 50,000-line import fast).
 */
export async function loadInactiveMembers(
  members: Collection<MembershipDoc>,
  asOf: number,
): Promise<Map<string, MemberState>> {
  const inactive = new Map<string, MemberState>();
  const cursor = members.find(
    { active: false, updatedAt: { $lt: asOf } },
    { projection: { _id: 1, active: 1, since: 1, updatedAt: 1 } },
  );
  for await (const doc of cursor) inactive.set(doc._id, doc);
  return inactive;
}

/**
 * One batch in at most two round trips. A document someone else wrote in between (the worker
 * applying a join or leave) keeps that newer state and counts as unchanged.
 */
export async function applyMemberBatch(
  members: Collection<MembershipDoc>,
  rows: readonly MemberRow[],
  inactive: ReadonlyMap<string, MemberState>,
  asOf: number,
): Promise<BatchCounts> {
  const plan = planMemberImport(rows, inactive, asOf);
  const counts: BatchCounts = { inserted: 0, updated: 0, unchanged: plan.unchanged };
  if (plan.inserts.length > 0) {
    try {
      counts.inserted = (await members.insertMany(plan.inserts, { ordered: false })).insertedCount;
    } catch (error) {
      // Already there: an active member, or one who left after the list was taken.
      if (!onlyDuplicateKeys(error)) throw error;
      counts.inserted = (error as { insertedCount?: number }).insertedCount ?? 0;
    }
    counts.unchanged += plan.inserts.length - counts.inserted;
  }
  if (plan.updates.length > 0) {
    const ops: AnyBulkWriteOperation<MembershipDoc>[] = plan.updates.map((update) => ({
      updateOne: {
        filter: { _id: update.id, active: update.expect.active, updatedAt: update.expect.updatedAt },
        update: { $set: update.set },
      },
    }));
    counts.updated = (await members.bulkWrite(ops, { ordered: false })).modifiedCount;
    counts.unchanged += plan.updates.length - counts.updated;
  }
  return counts;
}

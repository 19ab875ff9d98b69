import type { AnyBulkWriteOperation, Db } from 'mongodb';
import {
  isMemberAt,
  membershipIntervals,
  type MembershipEdge,
} from '../../../domain/membership-intervals.ts';
import { MEMBERSHIPS, MEMBERSHIP_CHANGES } from '../collections/collection-names.ts';
import { onlyDuplicateKeys } from '../driver/is-duplicate-key.ts';
import type { MembershipChangeDoc } from '../collections/membership-changes-collection.ts';
import { importedEdges } from './membership-changes.ts';
import { membershipId, type MembershipDoc } from '../collections/memberships-collection.ts';
import { planMemberImport, type KnownMember, type MemberRow } from './plan-member-import.ts';

export interface BatchCounts {
  inserted: number;
  updated: number;
  unchanged: number;
}

/**
 * The members who left before `asOf` (membershipId): a stored leave before it, or an imported
 * membership stored as left before it. Read once per import, as two scans by field on FerretDB
 * (which answers each point query with a scan): every other imported member is one at `asOf`,
 * so a batch reads the state of these only, and a 50,000-line import needs no read per row.
 */
export async function loadLeftMembers(db: Db, asOf: number): Promise<Set<string>> {
  const left = new Set<string>();
  const changes = db
    .collection<MembershipChangeDoc>(MEMBERSHIP_CHANGES)
    .find({ joined: false, at: { $lt: asOf } }, { projection: { _id: 0, member: 1 } });
  for await (const change of changes) left.add(change.member);
  const imported = db
    .collection<MembershipDoc>(MEMBERSHIPS)
    .find({ active: false, updatedAt: { $lt: asOf } }, { projection: { _id: 1 } });
  for await (const doc of imported) left.add(doc._id);
  return left;
}

/**
 * One batch in at most four round trips: the state of its members who left before `asOf` (their
 * imported membership and stored changes, folded as the fan-out folds them), then the inserts and
 * the compare-and-set updates. A document someone else wrote in between (another import) keeps
 * that state and counts as unchanged; a join or leave the worker stores meanwhile is folded with
 * the import by time, whichever was written first.
 */
export async function applyMemberBatch(
  db: Db,
  rows: readonly MemberRow[],
  left: ReadonlySet<string>,
  asOf: number,
): Promise<BatchCounts> {
  const members = db.collection<MembershipDoc>(MEMBERSHIPS);
  const ids = [...new Set(rows.map((row) => membershipId(row.communityId, row.userId)))].filter((id) =>
    left.has(id),
  );
  const plan = planMemberImport(rows, await knownMembers(db, ids, asOf), asOf);
  const counts: BatchCounts = { inserted: 0, updated: 0, unchanged: plan.unchanged };
  if (plan.inserts.length > 0) {
    try {
      counts.inserted = (await members.insertMany(plan.inserts, { ordered: false })).insertedCount;
    } catch (error) {
      // Already there: a member at `asOf` (not in `left`), or one another import wrote meanwhile.
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

/** The imported membership of each of `ids` and whether they are members at `asOf`. */
async function knownMembers(db: Db, ids: readonly string[], asOf: number): Promise<Map<string, KnownMember>> {
  const known = new Map<string, KnownMember>();
  if (ids.length === 0) return known;
  // membershipId and a change's `member` are the same JSON pair.
  const [imported, changes] = await Promise.all([
    db
      .collection<MembershipDoc>(MEMBERSHIPS)
      .find({ _id: { $in: [...ids] } }, { projection: { _id: 1, active: 1, since: 1, updatedAt: 1 } })
      .toArray(),
    db
      .collection<MembershipChangeDoc>(MEMBERSHIP_CHANGES)
      .find({ member: { $in: [...ids] } }, { projection: { _id: 0, member: 1, joined: 1, at: 1 } })
      .toArray(),
  ]);
  const importedById = new Map(imported.map((doc) => [doc._id, doc]));
  const edgesById = new Map<string, MembershipEdge[]>();
  for (const change of changes) {
    const edges = edgesById.get(change.member);
    if (edges) edges.push(change);
    else edgesById.set(change.member, [change]);
  }
  for (const id of ids) {
    const doc = importedById.get(id);
    const edges = [...(edgesById.get(id) ?? []), ...(doc ? importedEdges(doc) : [])];
    known.set(id, { imported: doc, memberAtAsOf: isMemberAt(membershipIntervals(edges), asOf) });
  }
  return known;
}

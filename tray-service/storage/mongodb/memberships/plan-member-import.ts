import { membershipId, type MembershipDoc } from '../collections/memberships-collection.ts';

/** One line of the platform's member list (the import's input). */
export interface MemberRow {
  communityId: string;
  userId: string;
  /** Epoch ms the user joined, when the list says. */
  joinedAt?: number;
}

/** A membership's state as the import needs it. */
export type MemberState = Pick<MembershipDoc, 'active' | 'since' | 'updatedAt'>;

/**
 * What the tray knows of a member who may not be one at the list's time: their imported
 * membership, if any, and whether the fold of it with their stored joins and leaves makes them a
 * member at `asOf`.
 */
export interface KnownMember {
  imported: MemberState | undefined;
  memberAtAsOf: boolean;
}

export interface MemberImportPlan {
  /** Inserted only if absent (a unique-key miss means it exists: left as it is). */
  inserts: MembershipDoc[];
  /** Compare-and-set changes: applied only if the document still has `expect`'s values. */
  updates: { id: string; expect: Pick<MembershipDoc, 'active' | 'updatedAt'>; set: Partial<MembershipDoc> }[];
  /** Rows that change nothing (repeated in the batch, or a newer state exists). */
  unchanged: number;
}

/**
 * Pure: what an import of `rows` (the member list as of `asOf`) changes, by the PostgreSQL
 * adapter's rule. `known` holds the members who left before `asOf` (any other imported member is
 * one at `asOf`). Rules:
 * - not imported before: becomes a member since `joinedAt` (or `asOf`), the earliest of a member
 *   listed more than once;
 * - imported, but not a member at `asOf` (a leave before it): the list is newer, so a member again
 *   from `asOf`; the join time the tray has is kept, so the earlier membership stays as it was
 *   (a membership stored as left before joins and leaves were change documents is active again
 *   since `joinedAt`);
 * - a member at `asOf`, or imported as of a later time: left as it is (never downgrade a newer
 *   state). So re-importing a file changes nothing.
 */
export function planMemberImport(
  rows: readonly MemberRow[],
  known: ReadonlyMap<string, KnownMember>,
  asOf: number,
): MemberImportPlan {
  const plan: MemberImportPlan = { inserts: [], updates: [], unchanged: 0 };
  // A member listed more than once joined at the earliest of the times given.
  const earliest = new Map<string, number>();
  for (const row of rows) {
    const id = membershipId(row.communityId, row.userId);
    earliest.set(id, Math.min(earliest.get(id) ?? Infinity, row.joinedAt ?? asOf));
  }
  const seen = new Set<string>();
  for (const row of rows) {
    const id = membershipId(row.communityId, row.userId);
    if (seen.has(id)) {
      plan.unchanged += 1;
      continue;
    }
    seen.add(id);
    const since = earliest.get(id) ?? asOf;
    const member = known.get(id);
    if (!member?.imported) {
      plan.inserts.push({
        _id: id,
        communityId: row.communityId,
        userId: row.userId,
        active: true,
        since,
        updatedAt: asOf,
      });
    } else if (!member.memberAtAsOf && member.imported.updatedAt < asOf) {
      const { imported } = member;
      plan.updates.push({
        id,
        expect: { active: imported.active, updatedAt: imported.updatedAt },
        set: imported.active ? { updatedAt: asOf } : { active: true, since, updatedAt: asOf },
      });
    } else {
      plan.unchanged += 1;
    }
  }
  return plan;
}

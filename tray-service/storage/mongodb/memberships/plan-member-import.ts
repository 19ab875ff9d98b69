import { membershipId, type MembershipDoc } from '../collections/memberships-collection.ts';

/** One line of the platform's member list (the import's input). */
export interface MemberRow {
  communityId: string;
  userId: string;
  /** Epoch ms the user joined, when the list says. */
  joinedAt?: number;
}

export interface MemberImportPlan {
  /**
   * Every member of the batch once, as a member new to the imports: inserted only if absent (a
   * unique-key miss means one imported before, who gets the list's time added instead).
   */
  inserts: MembershipDoc[];
  /** Rows that change nothing: repeats of a member earlier in the batch. */
  unchanged: number;
}

/**
 * Pure: what an import of `rows` (the member list as of `asOf`) writes, by the PostgreSQL adapter's
 * rule. Each listed member is a member as of `asOf`, a join of its own, processed before everything:
 * - not imported before: a member since `joinedAt` (or `asOf`), the earliest of a member listed
 *   more than once, and as of `asOf`;
 * - imported before: `asOf` is added to their list times (applyMemberBatch), whatever they were at
 *   that time, and nothing else changes: the join time the tray has and every earlier list's join
 *   stay, and a leave stored after `asOf` stands. So re-importing a file changes nothing.
 */
export function planMemberImport(rows: readonly MemberRow[], asOf: number): MemberImportPlan {
  // A member listed more than once joined at the earliest of the times given.
  const earliest = new Map<string, MembershipDoc>();
  for (const row of rows) {
    const id = membershipId(row.communityId, row.userId);
    const since = Math.min(earliest.get(id)?.since ?? Infinity, row.joinedAt ?? asOf);
    earliest.set(id, {
      _id: id,
      communityId: row.communityId,
      userId: row.userId,
      active: true,
      since,
      updatedAt: asOf,
      asOf: [asOf],
    });
  }
  return { inserts: [...earliest.values()], unchanged: rows.length - earliest.size };
}

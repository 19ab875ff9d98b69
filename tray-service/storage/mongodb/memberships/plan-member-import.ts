import { membershipId, type MembershipDoc } from './memberships-collection.ts';

/** One line of the platform's member list (the import's input). */
export interface MemberRow {
  communityId: string;
  userId: string;
  /** Epoch ms the user joined, when the list says. */
  joinedAt?: number;
}

/** A membership's state as the import needs it. */
export type MemberState = Pick<MembershipDoc, 'active' | 'since' | 'updatedAt'>;

export interface MemberImportPlan {
  /** Inserted only if absent (a unique-key miss means it exists: left as it is). */
  inserts: MembershipDoc[];
  /** Compare-and-set reactivations: applied only if the document still has `expect`'s values. */
  updates: { id: string; expect: Pick<MembershipDoc, 'active' | 'updatedAt'>; set: Partial<MembershipDoc> }[];
  /** Rows that change nothing (repeated in the batch, or a newer state exists). */
  unchanged: number;
}

/**
 * Pure: what an import of `rows` (the member list as of `asOf`) changes. `inactive` holds the
 * memberships that are stored as left. Rules:
 * - absent: becomes an active member since `joinedAt` (or `asOf`);
 * - left before `asOf`: the list is newer, so active again since `joinedAt` (or `asOf`);
 * - left after `asOf`, or already active: left as it is (never downgrade a newer state, and an
 *   active member keeps the `since` the tray knows). So re-importing a file changes nothing.
 */
export function planMemberImport(
  rows: readonly MemberRow[],
  inactive: ReadonlyMap<string, MemberState>,
  asOf: number,
): MemberImportPlan {
  const plan: MemberImportPlan = { inserts: [], updates: [], unchanged: 0 };
  const seen = new Set<string>();
  for (const row of rows) {
    const id = membershipId(row.communityId, row.userId);
    if (seen.has(id)) {
      plan.unchanged += 1;
      continue;
    }
    seen.add(id);
    const since = row.joinedAt ?? asOf;
    const left = inactive.get(id);
    if (!left) {
      plan.inserts.push({
        _id: id,
        communityId: row.communityId,
        userId: row.userId,
        active: true,
        since,
        updatedAt: asOf,
      });
    } else if (left.updatedAt < asOf) {
      plan.updates.push({ id, expect: left, set: { active: true, since, updatedAt: asOf } });
    } else {
      plan.unchanged += 1;
    }
  }
  return plan;
}

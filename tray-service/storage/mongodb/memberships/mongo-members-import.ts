import type { Db } from 'mongodb';
import { MEMBERSHIPS } from '../collection-names.ts';
import { type MembershipDoc } from './memberships-collection.ts';
import type { MembersImportPort } from '../../port.ts';
import { applyMemberBatch, loadInactiveMembers } from './apply-member-batch.ts';
import type { MemberState } from './plan-member-import.ts';

/**
 * The storage port's membership import on MongoDB (community_members). The memberships stored as
 * left are read once per import (one `asOf`), not once per batch: FerretDB answers that read with
 * a scan. Only the import writes community_members, so the set read stays true for its batches.
 */
export function createMongoMembersImport(db: Db): MembersImportPort {
  const members = db.collection<MembershipDoc>(MEMBERSHIPS);
  let loaded: { asOf: number; inactive: Promise<Map<string, MemberState>> } | undefined;
  return {
    async importBatch(batch, asOf) {
      if (loaded?.asOf !== asOf) {
        const inactive = loadInactiveMembers(members, asOf);
        loaded = { asOf, inactive };
        // A failed read is not kept: the next batch reads again.
        inactive.catch(() => {
          if (loaded?.inactive === inactive) loaded = undefined;
        });
      }
      const rows = batch.map((member) => ({
        communityId: member.communityId,
        userId: member.userId,
        joinedAt: member.since,
      }));
      return applyMemberBatch(members, rows, await loaded.inactive, asOf);
    },
  };
}

import type { Db } from 'mongodb';
import type { MembersImportPort } from '../../port.ts';
import { applyMemberBatch, loadLeftMembers } from './apply-member-batch.ts';

/**
 * The storage port's membership import on MongoDB (community_members). The members who left before
 * the list's time are read once per import (one `asOf`), not once per batch: FerretDB answers that
 * read with a scan. A leave stored while the import runs is folded with it by time.
 */
export function createMongoMembersImport(db: Db): MembersImportPort {
  let loaded: { asOf: number; left: Promise<Set<string>> } | undefined;
  return {
    async importBatch(batch, asOf) {
      if (loaded?.asOf !== asOf) {
        const left = loadLeftMembers(db, asOf);
        loaded = { asOf, left };
        // A failed read is not kept: the next batch reads again.
        left.catch(() => {
          if (loaded?.left === left) loaded = undefined;
        });
      }
      const rows = batch.map((member) => ({
        communityId: member.communityId,
        userId: member.userId,
        joinedAt: member.since,
      }));
      return applyMemberBatch(db, rows, await loaded.left, asOf);
    },
  };
}

import type { Db } from 'mongodb';
import type { MembersImportPort } from '../../port.ts';
import { applyMemberBatch } from './apply-member-batch.ts';

/**
 * The storage port's membership import on MongoDB (community_members): each batch is written
 * without reading first (applyMemberBatch), each listed member as of the list's time.
 */
export function createMongoMembersImport(db: Db): MembersImportPort {
  return {
    importBatch(batch, asOf) {
      const rows = batch.map((member) => ({
        communityId: member.communityId,
        userId: member.userId,
        joinedAt: member.since,
      }));
      return applyMemberBatch(db, rows, asOf);
    },
  };
}

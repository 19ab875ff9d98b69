import type { CollectionSpec } from './collection-spec.ts';
import { BLOCK_LIST } from './collection-names.ts';

/** One block relation (docs/contract.md#block-list-legacy-beta-deprecated). */
export interface BlockEntryDoc {
  /** JSON [netid_uid, blocked_userId]: makes blocking idempotent without a read. */
  _id: string;
  /** `${NETWORK_ID}_${ownerUserId}`: the owner's side of the entry. */
  netid_uid: string;
  blocked_userId: string;
  createdAt: Date;
}

/** block_list: who a user has blocked (the block API). */
export const blockListCollection: CollectionSpec = {
  name: BLOCK_LIST,
  indexes: [
    {
      name: 'api_block_owner',
      key: { netid_uid: 1, blocked_userId: 1 },
      unique: true,
      serves:
        'POST /block pages (netid_uid equality, blocked_userId order), GET /block/members checkList, and the removal of a deleted user’s list (netid_uid equality)',
    },
  ],
};

import type { CollectionSpec } from './collection-spec.ts';
import { BLOCK_LIST } from './block-list-repository.ts';

/** block_list: who a user has blocked (the block API). */
export const blockListCollection: CollectionSpec = {
  name: BLOCK_LIST,
  indexes: [
    {
      name: 'api_block_owner',
      key: { netid_uid: 1, blocked_userId: 1 },
      unique: true,
      serves: 'POST /block pages (netid_uid equality, blocked_userId order) and GET /block/members checkList',
    },
  ],
};

import type { Db } from 'mongodb';
import type { BlockEntry, BlockListPort } from '../port.ts';
import { blockFetchLimit, cutBlockPage } from './block-list-page.ts';
import { ignoreDuplicates } from './ignore-duplicates.ts';

export const BLOCK_LIST = 'block_list';

/** One block relation (docs/contract.md#block-list-legacy-beta-deprecated). */
export interface BlockEntryDoc {
  /** JSON [netid_uid, blocked_userId]: makes blocking idempotent without a read. */
  _id: string;
  /** `${NETWORK_ID}_${ownerUserId}`: the owner's side of the entry. */
  netid_uid: string;
  blocked_userId: string;
  createdAt: Date;
}

export type { BlockEntry, BlockListPage } from '../port.ts';
/** The MongoDB block list is the port's block list as it is. */
export type BlockListRepository = BlockListPort;

const entryId = (netidUid: string, blockedUserId: string) => JSON.stringify([netidUid, blockedUserId]);

export function createBlockListRepository(db: Db): BlockListRepository {
  const entries = db.collection<BlockEntryDoc>(BLOCK_LIST);
  return {
    async block(netidUid, blockedUserId) {
      // Two concurrent upserts of the same entry: the loser sees a duplicate key; the entry exists.
      await ignoreDuplicates(
        entries.updateOne(
          { _id: entryId(netidUid, blockedUserId) },
          { $setOnInsert: { netid_uid: netidUid, blocked_userId: blockedUserId, createdAt: new Date() } },
          { upsert: true },
        ),
      );
    },
    async unblock(netidUid, blockedUserId) {
      await entries.deleteOne({ _id: entryId(netidUid, blockedUserId) });
    },
    async page(netidUid, after, pageSize) {
      const rows = await entries
        .find(
          after === undefined
            ? { netid_uid: netidUid }
            : { netid_uid: netidUid, blocked_userId: { $gt: after } },
        )
        .sort({ netid_uid: 1, blocked_userId: 1 })
        .limit(blockFetchLimit(pageSize))
        .project<BlockEntry>({ _id: 0, netid_uid: 1, blocked_userId: 1 })
        .toArray();
      return cutBlockPage(rows, pageSize);
    },
    async blockedAmong(netidUid, userIds) {
      // The owner's entries for these ids only, from the unique (netid_uid, blocked_userId) index
      // (the API asks about 20 ids at most), not the owner's whole list.
      const rows = await entries
        .find({ netid_uid: netidUid, blocked_userId: { $in: [...new Set(userIds)] } })
        .project<{ blocked_userId: string }>({ _id: 0, blocked_userId: 1 })
        .toArray();
      return new Set(rows.map((row) => row.blocked_userId));
    },
  };
}

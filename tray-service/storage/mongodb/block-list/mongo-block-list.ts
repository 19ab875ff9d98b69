import type { Db } from 'mongodb';
import type { BlockEntry, BlockListPort } from '../../port.ts';
import { type BlockEntryDoc } from '../collections/block-list-collection.ts';
import { BLOCK_LIST } from '../collections/collection-names.ts';
import { blockFetchLimit, cutBlockPage } from './block-list-page.ts';
import { ignoreDuplicates } from '../driver/ignore-duplicates.ts';
import { blockListLockId, withWriteLock } from '../locks/write-lock.ts';

const entryId = (netidUid: string, blockedUserId: string) => JSON.stringify([netidUid, blockedUserId]);

/** The storage port's block list on MongoDB: one document per (owner, blocked user). */
export function createMongoBlockList(db: Db): BlockListPort {
  const entries = db.collection<BlockEntryDoc>(BLOCK_LIST);
  return {
    block(netidUid, blockedUserId, maxEntries) {
      const _id = entryId(netidUid, blockedUserId);
      const store = async () => {
        // Two concurrent upserts of the same entry: the loser sees a duplicate key; the entry exists.
        await ignoreDuplicates(
          entries.updateOne(
            { _id },
            { $setOnInsert: { netid_uid: netidUid, blocked_userId: blockedUserId, createdAt: new Date() } },
            { upsert: true },
          ),
        );
        return 'blocked' as const;
      };
      if (maxEntries === undefined) return store();
      // Counted under the owner's lock: no other block of the owner writes until this one has.
      // An entry already there is 'blocked' whatever the count (counted up to the limit only).
      return withWriteLock(db, blockListLockId(netidUid), async () =>
        (await entries.countDocuments({ _id })) > 0 ||
        (await entries.countDocuments({ netid_uid: netidUid }, { limit: maxEntries })) < maxEntries
          ? store()
          : 'full',
      );
    },
    async forget(netidUid) {
      await entries.deleteMany({ netid_uid: netidUid });
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

import type { Db } from 'mongodb';
import { TRAY_REMOVALS, TRAY_TARGET_ACTIONS } from '../collections/collection-names.ts';
import { groupKeptUntil } from '../grouping/purge-kept-actions.ts';
import { recordGroup } from '../records/storage-keys.ts';
import { latestExpiry } from '../driver/latest-expiry.ts';
import { oneByOne, purgeKeptDocuments } from '../driver/purge-kept-documents.ts';
import type { TombstoneDoc } from '../collections/tray-removals-collection.ts';

const later = (a: Date | undefined, b: Date | undefined) => (a && b ? (a > b ? a : b) : (a ?? b));

/**
 * The purge of the removals' tombstones (docs/storage.md#kept-actions-live-as-long-as-their-records),
 * which no TTL index expires: a tombstone voids what arrives after it, so past its own expiry it
 * goes only once nothing could take a voided action again: no action is kept on its post's thread
 * any more (`action_post_action`) (their documents carry their group's expiry once past their own), and for a deleted
 * community post its community's `post` group is over (purge-kept-actions.ts groupKeptUntil). Else
 * it moves to the latest of those expiries (purgeKeptDocuments). A voided action dated that old
 * makes a record of its own only expired. Every filter is an equality (`_id`, `postId`, `group`) or
 * the `expiresAt` range. Returns how many tombstones went.
 */
export function purgeKeptTombstones(db: Db, now: Date): Promise<number> {
  return purgeKeptDocuments<Pick<TombstoneDoc, '_id' | 'kind' | 'postId' | 'communityId'>>(
    db,
    TRAY_REMOVALS,
    now,
    {
      projection: { kind: 1, postId: 1, communityId: 1 },
      keptUntil: oneByOne(async (tombstone) => {
        const community =
          tombstone.kind === 'post' && tombstone.communityId !== undefined
            ? await groupKeptUntil(db, recordGroup('post', tombstone.communityId))
            : undefined;
        return later(await latestExpiry(db, TRAY_TARGET_ACTIONS, { postId: tombstone.postId }), community);
      }),
    },
  );
}

import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';
import { withInboxState } from './with-inbox-state.ts';
import { encodeRecordKey } from '../../../domain/record-key.ts';
import type { TrayRecord } from '../../../domain/tray-record.ts';
import type { InboxRecord } from '../../../domain/inbox-record.ts';

/**
 * A stored record as readers see it: the key of its (verb, target, user), and none of this
 * adapter's own fields (the claim version, the group key, expiry, the count window). Field by field, so a field a future write adds
 * stays inside the adapter until the reader's shape names it. Pure.
 */
export function toTrayRecord(doc: TrayRecordDoc): TrayRecord {
  const { userId, verb, targetId, parentTargetId, lastActionSegmentNo, mentionIn } = doc;
  return {
    key: encodeRecordKey({ verb, targetId, userId }),
    userId,
    verb,
    targetId,
    targetType: doc.targetType,
    targetName: doc.targetName,
    ...(parentTargetId === undefined ? {} : { parentTargetId }),
    lastActionId: doc.lastActionId,
    ...(lastActionSegmentNo === undefined ? {} : { lastActionSegmentNo }),
    feed: doc.feed,
    ...(mentionIn === undefined ? {} : { mentionIn }),
    actors: doc.actors,
    actorsCount: doc.actorsCount,
    lastUpdate: doc.lastUpdate,
    hasRead: doc.hasRead,
    unreadAt: doc.unreadAt,
    // Records written before live streams had no changedAt: they count as changed at 0.
    changedAt: doc.changedAt ?? 0,
  };
}

/** A stored record as the inbox's views and marks hand it out: with its inbox state. Pure. */
export function toInboxRecord(stored: TrayRecordDoc): InboxRecord {
  const doc = withInboxState(stored);
  return {
    ...toTrayRecord(doc),
    isSeen: doc.isSeen,
    archivedAt: doc.archivedAt,
    snoozedUntil: doc.snoozedUntil,
  };
}

/**
 * Told of written records in the reader's shape with their inbox state (the port's onWritten): a
 * live stream shows them as v3 history does.
 */
export function toldAsInboxRecords(
  onWritten: ((records: readonly InboxRecord[]) => Promise<void>) | undefined,
): { onWritten?: (docs: readonly TrayRecordDoc[]) => Promise<void> } {
  return onWritten ? { onWritten: (docs) => onWritten(docs.map(toInboxRecord)) } : {};
}

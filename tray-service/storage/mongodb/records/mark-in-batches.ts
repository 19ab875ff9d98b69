import type { TrayRecord } from '../../../domain/tray-record.ts';
import { PartialWriteError, type MarkedRecord } from '../../port.ts';
import { inBatches } from '../driver/in-batches.ts';
import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';

/**
 * A mark of every record `cursor` finds, a thousand at a time (inBatches): a user with a large
 * backlog is never read into memory whole, nor written by one compare-and-set call. The batches
 * before a failed one are changed for good, so a failure is thrown as a PartialWriteError carrying
 * what every batch changed, the failed one's included, and the caller still announces each record
 * this call marked. Each record is handed over once: MongoDB's cursor is no snapshot, and a record
 * a delivery moved along the index the cursor walks (a new unread time) may come again in a later
 * batch, where it would be judged anew on its new state and marked (leave-made-unread.ts). The
 * ids handed are kept for the call (about 100 bytes each: 100 MB for a mark of all of a million
 * records, where the records themselves are read a batch at a time).
 */
export async function markInBatches<R extends TrayRecord>(
  cursor: AsyncIterable<TrayRecordDoc>,
  markBatch: (found: readonly TrayRecordDoc[]) => Promise<MarkedRecord<R>[]>,
): Promise<MarkedRecord<R>[]> {
  const changed: MarkedRecord<R>[] = [];
  const handed = new Set<string>();
  try {
    await inBatches(cursor, async (found) => {
      const fresh = found.filter((record) => !handed.has(record._id));
      for (const record of fresh) handed.add(record._id);
      if (fresh.length > 0) changed.push(...(await markBatch(fresh)));
    });
  } catch (error) {
    const partly = error instanceof PartialWriteError ? (error.changed as MarkedRecord<R>[]) : [];
    if (changed.length + partly.length === 0) throw error;
    throw new PartialWriteError(
      [...changed, ...partly],
      error instanceof PartialWriteError ? error.cause : error,
    );
  }
  return changed;
}

import type { FindCursor } from 'mongodb';
import type { TrayRecord } from '../../../domain/tray-record.ts';
import { PartialWriteError, type MarkedRecord } from '../../port.ts';
import { inBatches } from '../driver/in-batches.ts';
import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';

/**
 * A mark of every record `cursor` finds, a thousand at a time (inBatches): a user with a large
 * backlog is never read into memory whole, nor written by one compare-and-set call. The batches
 * before a failed one are changed for good, so a failure is thrown as a PartialWriteError carrying
 * what every batch changed, the failed one's included, and the caller still announces each record
 * this call marked.
 */
export async function markInBatches<R extends TrayRecord>(
  cursor: FindCursor<TrayRecordDoc>,
  markBatch: (found: readonly TrayRecordDoc[]) => Promise<MarkedRecord<R>[]>,
): Promise<MarkedRecord<R>[]> {
  const changed: MarkedRecord<R>[] = [];
  try {
    await inBatches(cursor, async (found) => {
      changed.push(...(await markBatch(found)));
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

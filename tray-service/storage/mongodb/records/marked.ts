import type { TrayRecord } from '../../../domain/tray-record.ts';
import type { MarkedRecord } from '../../port.ts';
import type { TrayRecordDoc } from './tray-records-collection.ts';

/**
 * `record`, read from the `doc` a mark wrote, with the changedAt of the state it replaced as the
 * compare-and-set reports it by `_id`; a state without one counts as changed at 0, as a record
 * written before live streams does.
 */
export function marked<R extends TrayRecord>(
  record: R,
  doc: TrayRecordDoc,
  replaced: ReadonlyMap<string, number>,
): MarkedRecord<R> {
  return Object.assign(record, { changedBefore: replaced.get(doc._id) ?? 0 });
}

import type { Db } from 'mongodb';
import type { TrayRecord } from '../../../domain/tray-record.ts';
import type { MarkedRecord, TellMarked } from '../../port.ts';
import { collectChanged } from '../compare-and-set/collect-changed.ts';
import { casUpdateRecords, type ComputeRecord } from '../compare-and-set/cas-update-records.ts';
import { claimOwner } from '../compare-and-set/claim-owner.ts';
import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';

/**
 * A user's mark (read, seen, archived, snoozed) of the records `found`: `compute` written over them
 * by compare-and-set, each bulk stamped by `clock` (changedAt on the caller's clock, like every
 * write of the port, moved on for a long mark: markClock; unless `stampChangedAt` is false), under
 * claims of the request's own (a retry of a request is a new request), and told to `tell` once
 * stored. Answers the records it changed, as `shape` reads them (the objects told), each with the
 * changedAt of the state it replaced; a write stopped part-way throws a PartialWriteError with
 * those it changed.
 */
export function writeMarked<R extends TrayRecord>(
  db: Db,
  found: readonly TrayRecordDoc[],
  compute: ComputeRecord,
  clock: () => number,
  shape: (doc: TrayRecordDoc) => R,
  stampChangedAt = true,
  tell?: TellMarked<R>,
): Promise<MarkedRecord<R>[]> {
  const changed: MarkedRecord<R>[] = [];
  return collectChanged(changed, () =>
    casUpdateRecords(
      db,
      found.map((record) => record._id),
      compute,
      {
        owner: claimOwner(),
        now: clock,
        stampChangedAt,
        first: new Map(found.map((record) => [record._id, record])),
        // Each bulk told once stored (`tell`): a call whose rounds wait for other writers' claims
        // stamps its later bulks later, and its first ones must not wait for those to be told.
        onWritten: async (docs, replaced) => {
          const part = docs.map((doc) =>
            Object.assign(shape(doc), { changedBefore: replaced.get(doc._id) ?? 0 }),
          );
          changed.push(...part);
          if (tell) await tell(part);
        },
      },
    ),
  );
}

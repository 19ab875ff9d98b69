import type { Db } from 'mongodb';
import type { TrayRecord } from '../../../domain/tray-record.ts';
import type { MarkedRecord, TellMarked } from '../../port.ts';
import { collectChanged } from '../compare-and-set/collect-changed.ts';
import { casUpdateRecords, type ComputeRecord } from '../compare-and-set/cas-update-records.ts';
import { claimOwner } from '../compare-and-set/claim-owner.ts';
import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';

/**
/** How writeMarked stamps, shapes and tells what it writes. */
export interface WriteMarkedOptions<R extends TrayRecord> {
  /** Each bulk's changedAt (the caller's clock, like every write of the port: markClock). */
  clock: () => number;
  /** The record as the caller's port returns it. */
  shape: (doc: TrayRecordDoc) => R;
  /** false: changedAt is left as it is (a change no live stream is told of). */
  stampChangedAt?: boolean;
  /** Told each bulk once stored. */
  tell?: TellMarked<R> | undefined;
}

/**
 * A user's mark (read, seen, archived, snoozed) of the records `found`: `compute` written over them
 * by compare-and-set, each bulk stamped and told as `options` say, under claims of the request's
 * own (a retry of a request is a new request). Answers the records it changed, as `shape` reads
 * them (the objects told), each with the changedAt of the state it replaced; a write stopped
 * part-way throws a PartialWriteError with those it changed.
 */
export function writeMarked<R extends TrayRecord>(
  db: Db,
  found: readonly TrayRecordDoc[],
  compute: ComputeRecord,
  { clock, shape, stampChangedAt = true, tell }: WriteMarkedOptions<R>,
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

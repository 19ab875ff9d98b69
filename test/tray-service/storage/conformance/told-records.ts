import type { InboxRecord } from '../../../../tray-service/domain/inbox-record.ts';
import type { ReferenceTray } from '../../../support/reference-tray/reference-tray.ts';
import { inboxView } from '../../../support/reference-tray/reference-tray-reads.ts';
import { differences, plain } from './tray-snapshot.ts';

/**
 * What the writes tell onWritten (what the live streams publish), kept per record: the last state
 * told of each, so after an operation each can be checked against the reference tray.
 */
export interface ToldRecords {
  readonly onWritten: (records: readonly InboxRecord[]) => Promise<void>;
  /** The records told since the last call, the last state of each; forgets them. */
  take(): InboxRecord[];
  /** How many records were told since the last take. */
  pending(): number;
}

export function toldRecords(): ToldRecords {
  let told = new Map<string, InboxRecord>();
  return {
    onWritten: async (records) => {
      for (const record of records) told.set(`${record.userId}\n${record.key}`, record);
    },
    take() {
      const taken = [...told.values()];
      told = new Map();
      return taken;
    },
    pending: () => told.size,
  };
}

/**
 * Each told record whole (what a stream's `record` event tells a client: actors, count, read and
 * inbox state, and the changedAt the stream tells its states apart by) against the model's record
 * of that key after the same operation at `now`, one line per difference. Left out: a record the model no longer holds (a
 * later step of the operation removed it), and one the model holds expired at `now`: the adapters
 * tell what they write, expired or not, but no stream hears of an expired record (the apply-job use
 * case drops it), and what state an expired record keeps is left to each engine.
 */
export function toldDifferences(told: readonly InboxRecord[], model: ReferenceTray, now: number): string[] {
  return told.flatMap((told) => {
    // A mark's records also say when they changed before it (MarkedRecord), for the stream's
    // cursor: not a field of the record.
    const { changedBefore: _changedBefore, ...record } = told as InboxRecord & { changedBefore?: number };
    const expected = model.storedRecords(record.userId).find((stored) => stored.key === record.key);
    return expected && model.live(expected, now)
      ? differences(plain(record), plain(inboxView(expected)), ` told ${record.key}`)
      : [];
  });
}

import type { InboxRecord } from '../../../../tray-service/domain/inbox-record.ts';
import type { TrayStorage } from '../../../../tray-service/storage/port.ts';
import type { ReferenceTray } from '../../../support/reference-tray/reference-tray.ts';
import { inboxView } from '../../../support/reference-tray/reference-tray-reads.ts';
import { inboxOf } from './inbox-operation.ts';
import { differences, plain } from './tray-snapshot.ts';

/**
 * What the writes tell onWritten (what the live streams publish), kept per record: the last state
 * told of each, so after an operation each can be checked against the reference tray.
 */
export interface ToldRecords {
  readonly onWritten: (records: readonly InboxRecord[]) => Promise<void>;
  /** The records told since the last call, the last state of each; forgets them. */
  take(): InboxRecord[];
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
  };
}

/** The read and inbox state of a record: what a stream's `record` event tells a client. */
const stateOf = ({ key, hasRead, isSeen, archivedAt, snoozedUntil }: InboxRecord) =>
  plain({ key, hasRead, isSeen, archivedAt, snoozedUntil });

/**
 * Each told record's read and inbox state against the model's record of that key after the same
 * operation (a record the model no longer holds, a later step of the operation removed, is left
 * out); one line per difference.
 */
export function toldDifferences(told: readonly InboxRecord[], model: ReferenceTray): string[] {
  return told.flatMap((record) => {
    const expected = model.storedRecords(record.userId).find((stored) => stored.key === record.key);
    return expected ? differences(stateOf(record), stateOf(inboxView(expected)), ` told ${record.key}`) : [];
  });
}

/**
 * Each told record's read and inbox state against the storage's own `all` view right after the
 * operation (records a later step removed left out): what a stream was told is what history shows.
 */
export async function toldStoredDifferences(
  told: readonly InboxRecord[],
  storage: TrayStorage,
  now: number,
): Promise<string[]> {
  const found: string[] = [];
  for (const userId of new Set(told.map((record) => record.userId))) {
    const page = await inboxOf(storage).page(userId, 'all', undefined, 1_000, now);
    const stored = new Map(page.records.map((record) => [record.key, record]));
    for (const record of told.filter((one) => one.userId === userId)) {
      const expected = stored.get(record.key);
      if (expected) found.push(...differences(stateOf(record), stateOf(expected), ` told ${record.key}`));
    }
  }
  return found;
}

import type { InboxRecord } from '../domain/inbox-record.ts';
import type { InboxMark, MarkedRecord, RemovedRecord } from '../storage/port.ts';

/**
 * Where the use cases announce what they changed in a user's tray, after it is durable (the live
 * streams' publisher implements it; docs/live-tray.md). Announcing is best effort: the change is
 * already stored, and a stream that misses it catches up from storage.
 */
export interface TrayChanges {
  /**
   * Records the worker created or changed, and records a snooze's wake-up brought back, with their
   * inbox state.
   */
  recordsWritten(records: readonly InboxRecord[]): Promise<void>;
  /** Records a removal left with no action, gone from the tray. */
  recordsRemoved(records: readonly RemovedRecord[]): Promise<void>;
  /** Records marked read (v2/read, v3/mark-all-as-read). */
  markedRead(records: readonly MarkedRecord[]): Promise<void>;
  /**
   * Records one inbox mark changed (v3/records/seen, archive, unarchive, snooze, unsnooze), as they
   * now are. A snooze's wake-up is no mark: the records it brought back are recordsWritten.
   */
  inboxMarked(mark: InboxMark, records: readonly MarkedRecord<InboxRecord>[]): Promise<void>;
  /** The whole tray deleted at `at` (v3/delete-all). */
  cleared(userId: string, at: number): Promise<void>;
  /** The last-read time moved: only the unread count changes. */
  lastRead(userId: string): Promise<void>;
}

import type { TrayRecord } from '../../../domain/tray-record.ts';

/**
 * A tray record as the MongoDB adapter stores it: the reader's fields (domain/tray-record.ts) under
 * the key as `_id`, plus the adapter's own mechanics (the counting start, the fan-out's group key,
 * the expiry date of the TTL index, the compare-and-set version). to-tray-record.ts maps it back.
 */
export interface TrayRecordDoc extends Omit<TrayRecord, 'key' | 'changedAt'> {
  /** v_tarid_uid (record-key.ts). */
  _id: string;
  /**
   * The earliest action this record has counted. Actors whose latest action is older are not its
   * actors: a record re-created after delete-all or expiry, or a member's record for a community
   * they joined later, starts counting afresh.
   */
  countFrom: number;
  /** recordGroup(verb, targetId): every recipient's record of one target, read by equality in a fan-out. */
  group: string;
  /** lastUpdate + TRAY_RETENTION_DAYS; TTL index where supported, purge + read filter everywhere. */
  expiresAt: Date;
  /**
   * Compare-and-set counter. Every write to an existing record, the worker's and the API's
   * (marking read), goes through casUpdateRecords: it claims `${_id}#${nextVersion}` in
   * tray_record_claims, then writes filtered on `version`, so concurrent writers never undo each
   * other, also on FerretDB whose updates are not atomic. A new record starts at its creation time
   * on the tray's clock, so a record re-created under the same `_id` never meets a claim of its
   * previous life.
   */
  version: number;
  /**
   * Epoch ms on the clock of the process that wrote it: when this state of the record was written.
   * casUpdateRecords stamps it on every insert and update, so a live stream that reconnects finds
   * "records changed since" by the user's records (docs/live-tray.md). Absent on records written
   * before live streams existed: they count as changed at 0.
   */
  changedAt?: number;
}

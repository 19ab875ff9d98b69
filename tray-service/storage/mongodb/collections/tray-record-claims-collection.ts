import { EXPIRY_INDEX, type CollectionSpec } from './collection-spec.ts';
import { TRAY_RECORD_CLAIMS } from './collection-names.ts';

/** tray_record_claims: the version claims of the compare-and-set protocol (claimVersions). */
export const trayRecordClaimsCollection: CollectionSpec = {
  name: TRAY_RECORD_CLAIMS,
  indexes: [EXPIRY_INDEX],
  retiredIndexes: ['expiry_day'],
};

/** tray_record_claims: who may move a record to a version (see claimVersions). */
export interface RecordClaimDoc {
  /** `${recordId}#${version}`: the version the claimant is about to write. */
  _id: string;
  /** The job that claimed it (its dedupe key): a retry of that job may go on with its own claim. */
  owner: string;
  /**
   * A fingerprint of the state the claimant will write (absent on claims of earlier releases). Two
   * concurrent writes under one owner that would write different states must not both take the
   * claim: only a write of this same state is the owner's retry.
   */
  state?: string;
  /**
   * The claiming call's own id: a claim found under it was inserted by that very call (an insert
   * run again after its answer was lost). Absent on claims of earlier releases.
   */
  call?: string;
  claimedAt: Date;
  /** Claims are only needed for the instant of a write; TTL-deleted (or purged) after this. */
  expiresAt: Date;
}

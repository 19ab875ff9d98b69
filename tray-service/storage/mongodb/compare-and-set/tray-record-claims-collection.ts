import { EXPIRY_INDEX, type CollectionSpec } from '../setup/collection-spec.ts';
import { TRAY_RECORD_CLAIMS } from '../collection-names.ts';

/** tray_record_claims: the version claims of the compare-and-set protocol (claimVersions). */
export const trayRecordClaimsCollection: CollectionSpec = {
  name: TRAY_RECORD_CLAIMS,
  indexes: [EXPIRY_INDEX],
  retiredIndexes: ['expiry_day'],
};

import type { CollectionSpec } from './collection-spec.ts';
import { TRAY_RECORD_CLAIMS } from './collection-names.ts';

/** tray_record_claims: the version claims of the compare-and-set protocol (claimVersions). */
export const trayRecordClaimsCollection: CollectionSpec = {
  name: TRAY_RECORD_CLAIMS,
  indexes: [
    {
      name: 'expiry',
      key: { expiresAt: 1 },
      expireAfterSeconds: 0,
      serves: 'expiry: the server’s TTL deletes, and deleteMany({expiresAt <= now}) in purgeExpired',
    },
  ],
  retiredIndexes: ['expiry_day'],
};

import type { CollectionSpec } from './collection-spec.ts';
import { TRAY_RECORD_CLAIMS } from '../../../shared/tray/tray-record.ts';

/** tray_record_claims: the version claims of the compare-and-set protocol (claimVersions). */
export const trayRecordClaimsCollection: CollectionSpec = {
  name: TRAY_RECORD_CLAIMS,
  indexes: [
    {
      name: 'expiry_day',
      key: { expiresDay: 1 },
      serves: 'deleteMany({expiresDay}) in purgeExpired',
    },
    {
      name: 'expiry',
      key: { expiresAt: 1 },
      expireAfterSeconds: 0,
      serves: 'the server’s TTL deletes on MongoDB',
    },
  ],
};

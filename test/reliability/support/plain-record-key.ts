import { decodeRecordKey } from '../../../tray-service/domain/record-key.ts';

/**
 * A stored or served record key (`v_tarid_uid`, each part escaped: tray-service/domain/record-key.ts)
 * as the reference models write keys, the contract's plain `<verb>_<targetId>_<userId>` join, so
 * ids containing `_` compare too. A key that does not decode is returned as it is (and then
 * matches nothing the models expect).
 */
export function plainRecordKey(key: string): string {
  const identity = decodeRecordKey(key);
  return identity ? `${identity.verb}_${identity.targetId}_${identity.userId}` : key;
}

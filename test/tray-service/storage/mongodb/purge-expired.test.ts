import { expect } from 'chai';
import {
  EVENTS,
  TRAY_RECORD_CLAIMS,
  TRAY_RECORDS,
  TRAY_TARGET_ACTORS,
} from '../../../../tray-service/storage/mongodb/collection-names.ts';
import { purgeExpired } from '../../../../tray-service/storage/mongodb/purge-expired.ts';
import { useMongo } from '../../../support/suite-resources.ts';

describe('purgeExpired', () => {
  const mongo = useMongo();

  describe('with records, events, group actors and claims past and before their expiry', () => {
    it('deletes every one whose expiresAt has passed, also a minute ago, and says how many records and events went', async () => {
      const now = new Date();
      const at = (ms: number) => new Date(now.getTime() + ms);
      for (const collection of [TRAY_RECORDS, EVENTS, TRAY_TARGET_ACTORS, TRAY_RECORD_CLAIMS]) {
        await mongo.db.collection(collection).insertMany([
          { _id: 'days-ago' as never, expiresAt: at(-3 * 86_400_000) },
          { _id: 'minute-ago' as never, expiresAt: at(-60_000) },
          { _id: 'now' as never, expiresAt: now },
          { _id: 'later' as never, expiresAt: at(1) },
        ]);
      }
      expect(await purgeExpired(mongo.db, now)).to.deep.equal({ records: 3, events: 3 });
      for (const collection of [TRAY_RECORDS, EVENTS, TRAY_TARGET_ACTORS, TRAY_RECORD_CLAIMS])
        expect(await mongo.db.collection(collection).distinct('_id'), collection).to.deep.equal(['later']);
      expect(await purgeExpired(mongo.db, now)).to.deep.equal({ records: 0, events: 0 });
    });
  });
});

import { DAY_MS } from '../../../../shared/time/durations.ts';
import { expect } from 'chai';
import { dayOf } from '../../../../shared/tray/storage-keys.ts';
import { EVENTS, TRAY_RECORDS } from '../../../../shared/tray/tray-record.ts';
import { purgeExpired } from '../../../../tray-service/storage/mongodb/purge-expired.ts';
import { useMongo } from '../../../support/suite-resources.ts';

describe('purgeExpired', () => {
  const mongo = useMongo();

  describe('with records and events past and before their expiry', () => {
    it('deletes only the expired ones, a whole past day at a time', async () => {
      const now = new Date();
      const expiresIn = (days: number) => new Date(now.getTime() + days * DAY_MS);
      await mongo.db.collection(TRAY_RECORDS).insertMany([
        // lastUpdate 91 days ago with 90-day retention: expired a day ago.
        { _id: 'old' as never, userId: 'u-ana', expiresAt: expiresIn(-1), expiresDay: dayOf(expiresIn(-1)) },
        { _id: 'new' as never, userId: 'u-ana', expiresAt: expiresIn(1), expiresDay: dayOf(expiresIn(1)) },
      ]);
      await mongo.db.collection(EVENTS).insertMany([
        { _id: 'e-old' as never, expiresAt: expiresIn(-1), expiresDay: dayOf(expiresIn(-1)) },
        { _id: 'e-new' as never, expiresAt: expiresIn(29), expiresDay: dayOf(expiresIn(29)) },
      ]);
      expect(await purgeExpired(mongo.db, now)).to.deep.equal({ records: 1, events: 1 });
      expect(await mongo.db.collection(TRAY_RECORDS).distinct('_id')).to.deep.equal(['new']);
      expect(await mongo.db.collection(EVENTS).distinct('_id')).to.deep.equal(['e-new']);
    });
  });
});

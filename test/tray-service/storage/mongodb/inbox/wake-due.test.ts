import { expect } from 'chai';
import { TRAY_RECORDS } from '../../../../../tray-service/storage/mongodb/collection-names.ts';
import { wakeDue } from '../../../../../tray-service/storage/mongodb/inbox/wake-due.ts';
import type { TrayRecordDoc } from '../../../../../tray-service/storage/mongodb/records/tray-records-collection.ts';
import { trayCollections } from '../../../../../tray-service/storage/mongodb/tray-collections.ts';
import { PartialWriteError } from '../../../../../tray-service/storage/port.ts';
import type { InboxRecord } from '../../../../../tray-service/domain/inbox-record.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';
import { aTrayRecord, insertRecords } from '../../../../support/tray-record-builder.ts';
import { claimFor } from '../support/claim-for.ts';

// A wake-up held up by one record (a claim of a process that died between claiming and writing it
// holds it for the takeover time) has woken the others already: it must still say which, or no
// stream hears of them and no count is refreshed.
describe('wakeDue on MongoDB with one due record held by a stopped writer’s claim', function () {
  this.timeout(60_000);
  const mongo = useMongo();
  before(() => ensureTestCollections(mongo.db, trayCollections));

  it('fails with a PartialWriteError carrying every record it woke', async () => {
    const now = Date.now();
    const snoozed = (userId: string, endedAgo: number) =>
      aTrayRecord({
        userId,
        hasRead: true,
        isSeen: true,
        box: 'snoozed',
        snoozedUntil: now - endedAgo,
        lastUpdate: now - 60_000,
      });
    // The held record ends first: it is read first in every batch.
    const held = snoozed('wake-held', 3_000);
    const others = [snoozed('wake-a', 2_000), snoozed('wake-b', 1_000)];
    await insertRecords(mongo.db, [held, ...others]);
    await claimFor(mongo.db, 'a-stopped-writer', held._id, held.version + 1);

    const failure = await wakeDue(mongo.db, now, 10).then(
      () => expect.fail('the wake-up succeeded past a held record'),
      (error: unknown) => error,
    );
    expect(failure).to.be.instanceOf(PartialWriteError);
    const woken = (failure as PartialWriteError<InboxRecord>).changed;
    expect(woken.map((record) => record.key).sort()).to.deep.equal(others.map((record) => record._id).sort());
    const stored = await mongo.db
      .collection<TrayRecordDoc>(TRAY_RECORDS)
      .find({ _id: { $in: [held._id, ...others.map((record) => record._id)] } })
      .toArray();
    expect(Object.fromEntries(stored.map((record) => [record._id, record.box]))).to.deep.equal({
      [held._id]: 'snoozed',
      [others[0]!._id]: 'inbox',
      [others[1]!._id]: 'inbox',
    });
  });
});

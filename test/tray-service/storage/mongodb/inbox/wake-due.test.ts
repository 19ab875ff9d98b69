import { expect } from 'chai';
import {
  TRAY_RECORD_CLAIMS,
  TRAY_RECORDS,
} from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import type { RecordClaimDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-record-claims-collection.ts';
import { wakeDue } from '../../../../../tray-service/storage/mongodb/inbox/wake-due.ts';
import type { TrayRecordDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-records-collection.ts';
import { trayCollections } from '../../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';
import { aTrayRecord, insertRecords } from '../../../../support/tray-record-builder.ts';
import { claimFor } from '../support/claim-for.ts';
import { withCollectionMethod } from '../../../../support/with-collection-method.ts';

// A record held by a claim of a process that died between claiming and writing it stays held for
// the claim's takeover (60 s). Each wake-up read it first and retried it for about 12 s before
// failing, so the records due after it woke a batch a minute late: snoozes that end together
// ("tomorrow 9:00") came back up to a minute late. It is left to the takeover now, and read past.
describe('wakeDue on MongoDB with one due record held by a stopped writer’s claim', function () {
  this.timeout(60_000);
  const mongo = useMongo();
  before(() => ensureTestCollections(mongo.db, trayCollections));

  it('wakes every other due record, those due after it included, and leaves it snoozed', async () => {
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
    const held = snoozed('wake-held', 4_000);
    const others = [snoozed('wake-a', 3_000), snoozed('wake-b', 2_000), snoozed('wake-c', 1_000)];
    await insertRecords(mongo.db, [held, ...others]);
    await claimFor(mongo.db, 'a-stopped-writer', held._id, held.version + 1);

    // A batch of 2: the held record and the first other are read first, then the rest.
    const first = await wakeDue(mongo.db, now, 2);
    expect(first.map((record) => record.key)).to.deep.equal([others[0]!._id, others[1]!._id]);
    const second = await wakeDue(mongo.db, now, 2);
    expect(second.map((record) => record.key)).to.deep.equal([others[2]!._id]);
    const stored = await mongo.db
      .collection<TrayRecordDoc>(TRAY_RECORDS)
      .find({ _id: { $in: [held._id, ...others.map((record) => record._id)] } })
      .toArray();
    expect(Object.fromEntries(stored.map((record) => [record._id, record.box]))).to.deep.equal({
      [held._id]: 'snoozed',
      [others[0]!._id]: 'inbox',
      [others[1]!._id]: 'inbox',
      [others[2]!._id]: 'inbox',
    });
  });

  it('wakes it at the wake-up after the claim’s takeover', async () => {
    const now = Date.now();
    const record = aTrayRecord({
      userId: 'wake-taken-over',
      box: 'snoozed',
      snoozedUntil: now - 1_000,
      lastUpdate: now - 60_000,
    });
    await insertRecords(mongo.db, [record]);
    await claimFor(mongo.db, 'a-stopped-writer', record._id, record.version + 1);
    // Claimed 61 s ago: past the takeover.
    await mongo.db
      .collection<RecordClaimDoc>(TRAY_RECORD_CLAIMS)
      .updateOne(
        { _id: `${record._id}#${record.version + 1}` },
        { $set: { claimedAt: new Date(now - 61_000) } },
      );
    // The first wake-up takes the stale claim away (claimVersions), the next one wakes it.
    await wakeDue(mongo.db, now, 10);
    expect((await wakeDue(mongo.db, now, 10)).map((woken) => woken.key)).to.include(record._id);
  });

  // The held record woken by the process that held it between two reads: the next read no longer
  // has it, and asked one record more for it. Waking past the limit ended the loop's round early
  // (it goes on while a wake-up comes back full), leaving the rest due for one more interval.
  it('wakes no more than its limit when a held record was woken elsewhere between two reads', async () => {
    const now = Date.now();
    const snoozed = (userId: string, endedAgo: number) =>
      aTrayRecord({ userId, box: 'snoozed', snoozedUntil: now - endedAgo, lastUpdate: now - 60_000 });
    const held = snoozed('limit-held', 5_000);
    const others = ['limit-a', 'limit-b', 'limit-c', 'limit-d'].map((userId, index) =>
      snoozed(userId, 4_000 - index * 1_000),
    );
    await insertRecords(mongo.db, [held, ...others]);
    await claimFor(mongo.db, 'another-process', held._id, held.version + 1);
    let reads = 0;
    const db = withCollectionMethod(
      mongo.db,
      TRAY_RECORDS,
      'find',
      (find) =>
        ((...args: Parameters<typeof find>) => {
          const cursor = find(...args);
          if (++reads !== 2) return cursor;
          // Before the second read runs: the holder wakes its record.
          const read = cursor.toArray.bind(cursor);
          cursor.toArray = async () => {
            await mongo.db
              .collection<TrayRecordDoc>(TRAY_RECORDS)
              .updateOne({ _id: held._id }, { $set: { box: 'inbox', version: held.version + 1 } });
            return read();
          };
          return cursor;
        }) as typeof find,
    );
    const woken = await wakeDue(db, now, 2);
    expect(woken.map((record) => record.key)).to.deep.equal([others[0]!._id, others[1]!._id]);
  });
});

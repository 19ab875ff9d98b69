import { expect } from 'chai';
import { TRAY_RECORDS } from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { createMongoInbox } from '../../../../../tray-service/storage/mongodb/inbox/mongo-inbox.ts';
import {
  migrateInboxState,
  type PreInboxRecordDoc,
} from '../../../../../tray-service/storage/mongodb/records/migrate-inbox-state.ts';
import { createMongoRecords } from '../../../../../tray-service/storage/mongodb/records/mongo-records.ts';
import type { TrayRecordDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-records-collection.ts';
import { trayCollections } from '../../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';
import { aTrayRecord } from '../../../../support/tray-record-builder.ts';

/** A record as versions before the inbox stored it: no seen flag, archive, snooze or box. */
function preInbox(overrides: Parameters<typeof aTrayRecord>[0]): PreInboxRecordDoc {
  const {
    isSeen: _seen,
    archivedAt: _archived,
    snoozedUntil: _snoozed,
    box: _box,
    ...record
  } = aTrayRecord(overrides);
  return record;
}

// Records written before the inbox existed are in the inbox, seen when they were read.
describe('migrateInboxState (records of before the inbox)', () => {
  const mongo = useMongo();
  const now = Date.now();

  before(async () => {
    await ensureTestCollections(mongo.db, trayCollections);
    await mongo.db
      .collection<PreInboxRecordDoc>(TRAY_RECORDS)
      .insertMany([
        preInbox({ userId: 'u-ana', targetId: 'p-read', hasRead: true, lastUpdate: now - 2_000 }),
        preInbox({ userId: 'u-ana', targetId: 'p-unread', lastUpdate: now - 1_000 }),
      ]);
  });

  it('sets isSeen to hasRead and puts every record in the inbox, once', async () => {
    expect(await migrateInboxState(mongo.db)).to.equal(2);
    const stored = await mongo.db
      .collection<TrayRecordDoc>(TRAY_RECORDS)
      .find({ userId: 'u-ana' })
      .sort({ lastUpdate: 1 })
      .toArray();
    expect(
      stored.map(({ targetId, isSeen, archivedAt, snoozedUntil, box }) => ({
        targetId,
        isSeen,
        archivedAt,
        snoozedUntil,
        box,
      })),
    ).to.deep.equal([
      { targetId: 'p-read', isSeen: true, archivedAt: null, snoozedUntil: null, box: 'inbox' },
      { targetId: 'p-unread', isSeen: false, archivedAt: null, snoozedUntil: null, box: 'inbox' },
    ]);
    expect(await migrateInboxState(mongo.db)).to.equal(0);
  });

  it('leaves them in the platform’s counts and the inbox’s', async () => {
    const records = createMongoRecords(mongo.db, { lastRead: { latest: async () => 0 } });
    expect(await records.countUnread('u-ana', 0, now)).to.equal(1);
    expect(await records.count('u-ana', now)).to.equal(2);
    expect(await createMongoInbox(mongo.db).countUnseen('u-ana', now)).to.equal(1);
  });

  // During a rolling upgrade an older worker still writes records without inbox state after the
  // newer process's pass ran: they read as in the inbox, seen when read, until their next change.
  describe('a record an older worker writes after the pass (a rolling upgrade)', () => {
    const late = preInbox({ userId: 'u-ben', targetId: 'p-late', lastUpdate: now - 500 });
    before(() => mongo.db.collection<PreInboxRecordDoc>(TRAY_RECORDS).insertOne(late));

    it('reads as in the inbox, unseen while unread, not archived', async () => {
      const { records } = await createMongoInbox(mongo.db).page('u-ben', 'all', undefined, 10, now);
      expect(
        records.map(({ isSeen, archivedAt, snoozedUntil }) => ({ isSeen, archivedAt, snoozedUntil })),
      ).to.deep.equal([{ isSeen: false, archivedAt: null, snoozedUntil: null }]);
    });

    it('stays in the inbox when marked seen, and gets its inbox state', async () => {
      const inbox = createMongoInbox(mongo.db);
      const [record] = (await inbox.page('u-ben', 'all', undefined, 10, now)).records;
      expect(await inbox.mark('u-ben', { kind: 'seen', ids: [record!.key] }, now)).to.have.lengthOf(1);
      const stored = await mongo.db.collection<TrayRecordDoc>(TRAY_RECORDS).findOne({ _id: late._id });
      expect(stored).to.deep.include({ isSeen: true, archivedAt: null, snoozedUntil: null, box: 'inbox' });
    });
  });
});

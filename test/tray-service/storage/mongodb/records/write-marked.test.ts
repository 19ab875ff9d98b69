import { expect } from 'chai';
import { TRAY_RECORD_CLAIMS } from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import type { RecordClaimDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-record-claims-collection.ts';
import { trayCollections } from '../../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
import { createMongoInbox } from '../../../../../tray-service/storage/mongodb/inbox/mongo-inbox.ts';
import { createMongoRecords } from '../../../../../tray-service/storage/mongodb/records/mongo-records.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';
import { aTrayRecord, insertRecords } from '../../../../support/tray-record-builder.ts';
import { claimFor } from '../support/claim-for.ts';
import type { TrayRecordDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-records-collection.ts';

// A live stream counts a change stamped SETTLE_MS before the newest it delivered as delivered, and a
// resumed stream looks back no further: a mark must be stored and told within that window of its
// stamp. A mark stamped with the time it was asked, whose rounds waited for another writer's claim
// or whose batches took seconds on a slow server, was stored and told past it.
describe('MongoDB marks stamped by markClock', function () {
  this.timeout(60_000);
  const mongo = useMongo();
  before(() => ensureTestCollections(mongo.db, trayCollections));

  const HOLD_MS = 2_500;
  /**
   * Two records of `userId` (on targets `first`, `second`) stored a minute before `now`; another
   * writer holds the next version of the one named `held` for HOLD_MS, then lets it go. Returns the
   * records and the stop of that release, for the test's end.
   */
  const twoRecordsOneHeld = async (userId: string, now: number, targets: [string, string], held: 0 | 1) => {
    const records = targets.map((targetId) => aTrayRecord({ userId, targetId, lastUpdate: now - 60_000 }));
    await insertRecords(mongo.db, records);
    const holding = records[held]!;
    const claim = `${holding._id}#${holding.version + 1}`;
    await claimFor(mongo.db, 'another-writer', holding._id, holding.version + 1);
    const release = setTimeout(
      () => void mongo.db.collection<RecordClaimDoc>(TRAY_RECORD_CLAIMS).deleteOne({ _id: claim }),
      HOLD_MS,
    );
    return { records: records as [TrayRecordDoc, TrayRecordDoc], stop: () => clearTimeout(release) };
  };

  it('stamp a record a mark waited for with the time it wrote it, past the time it was given', async () => {
    const now = Date.now();
    const held = await twoRecordsOneHeld('u-waits', now, ['mark-clock-a', 'mark-clock-b'], 0);
    const [, free] = held.records;
    try {
      const records = createMongoRecords(mongo.db, { lastRead: { latest: async () => 0 } });
      const { changed } = await records.markRead('u-waits', 'comment', 'mark-clock-a', now);
      expect(changed).to.have.lengthOf(1);
      expect(changed[0]!.changedAt - now).to.be.at.least(HOLD_MS - 1_000 - 100);
    } finally {
      held.stop();
    }
    // One that waits for nothing keeps the time it was given.
    const inbox = createMongoInbox(mongo.db);
    const seen = await inbox.mark('u-waits', { kind: 'seen', ids: [free._id] }, now + 5);
    expect(seen.map((record) => record.changedAt)).to.deep.equal([now + 5]);
  });

  it('tell what a mark stored while its rounds wait for another writer’s claim, before the rest', async () => {
    const now = Date.now();
    const holding = await twoRecordsOneHeld('u-told-first', now, ['told-first-a', 'told-first-b'], 1);
    const [free, held] = holding.records;
    try {
      const started = performance.now();
      const told: { keys: string[]; afterMs: number }[] = [];
      const changed = await createMongoInbox(mongo.db).mark(
        'u-told-first',
        { kind: 'seen', ids: [free._id, held._id] },
        now,
        async (part) =>
          void told.push({ keys: part.map((record) => record.key), afterMs: performance.now() - started }),
      );
      expect(changed).to.have.lengthOf(2);
      expect(told.map((part) => part.keys)).to.deep.equal([[free._id], [held._id]]);
      expect(told[0]!.afterMs, 'the free record told before the claim went').to.be.below(HOLD_MS - 500);
    } finally {
      holding.stop();
    }
  });

  it('tell each batch of a mark of all as soon as it is stored, before the next batch is written', async () => {
    const now = Date.now();
    const userId = 'u-many-unread';
    const count = 1_100;
    await insertRecords(
      mongo.db,
      Array.from({ length: count }, (_, n) =>
        aTrayRecord({ userId, targetId: `many-${n}`, lastUpdate: now - 60_000 - n }),
      ),
    );
    const records = createMongoRecords(mongo.db, { lastRead: { latest: async () => 0 } });
    const told: { size: number; unreadThen: number }[] = [];
    const changed = await records.markAllRead(userId, now, async (part) => {
      told.push({ size: part.length, unreadThen: await records.countUnread(userId, 0, now) });
    });
    expect(changed).to.have.lengthOf(count);
    expect(told.map((part) => part.size).reduce((sum, size) => sum + size, 0)).to.equal(count);
    expect(told.length).to.be.at.least(2);
    // Told while the records of the later batches were still unread.
    expect(told[0]!.unreadThen).to.equal(count - told[0]!.size);
    expect(told.at(-1)!.unreadThen).to.equal(0);
  });
});

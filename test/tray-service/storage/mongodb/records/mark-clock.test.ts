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

// A live stream counts a change stamped SETTLE_MS before the newest it delivered as delivered, and a
// resumed stream looks back no further: a mark must be stored and told within that window of its
// stamp. A mark stamped with the time it was asked, whose rounds waited for another writer's claim
// or whose batches took seconds on a slow server, was stored and told past it.
describe('MongoDB marks stamped by markClock', function () {
  this.timeout(60_000);
  const mongo = useMongo();
  before(() => ensureTestCollections(mongo.db, trayCollections));

  it('stamp a record a mark waited for with the time it wrote it, past the time it was given', async () => {
    const now = Date.now();
    const [held, free] = ['mark-clock-a', 'mark-clock-b'].map((targetId) =>
      aTrayRecord({ userId: 'u-waits', targetId, lastUpdate: now - 60_000 }),
    ) as [ReturnType<typeof aTrayRecord>, ReturnType<typeof aTrayRecord>];
    await insertRecords(mongo.db, [held, free]);
    // Another writer holds the record's next version for 2.5 s, then lets it go.
    await claimFor(mongo.db, 'another-writer', held._id, held.version + 1);
    const waitMs = 2_500;
    const release = setTimeout(
      () =>
        void mongo.db
          .collection<RecordClaimDoc>(TRAY_RECORD_CLAIMS)
          .deleteOne({ _id: `${held._id}#${held.version + 1}` }),
      waitMs,
    );
    try {
      const records = createMongoRecords(mongo.db, { lastRead: { latest: async () => 0 } });
      const { changed } = await records.markRead('u-waits', 'comment', 'mark-clock-a', now);
      expect(changed).to.have.lengthOf(1);
      expect(changed[0]!.changedAt - now).to.be.at.least(waitMs - 1_000 - 100);
    } finally {
      clearTimeout(release);
    }
    // One that waits for nothing keeps the time it was given.
    const inbox = createMongoInbox(mongo.db);
    const seen = await inbox.mark('u-waits', { kind: 'seen', ids: [free._id] }, now + 5);
    expect(seen.map((record) => record.changedAt)).to.deep.equal([now + 5]);
  });

  it('tell what a mark stored while its rounds wait for another writer’s claim, before the rest', async () => {
    const now = Date.now();
    const [free, held] = ['told-first-a', 'told-first-b'].map((targetId) =>
      aTrayRecord({ userId: 'u-told-first', targetId, lastUpdate: now - 60_000 }),
    ) as [ReturnType<typeof aTrayRecord>, ReturnType<typeof aTrayRecord>];
    await insertRecords(mongo.db, [free, held]);
    await claimFor(mongo.db, 'another-writer', held._id, held.version + 1);
    const release = setTimeout(
      () =>
        void mongo.db
          .collection<RecordClaimDoc>(TRAY_RECORD_CLAIMS)
          .deleteOne({ _id: `${held._id}#${held.version + 1}` }),
      2_500,
    );
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
      expect(told[0]!.afterMs, 'the free record told before the claim went').to.be.below(2_000);
    } finally {
      clearTimeout(release);
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

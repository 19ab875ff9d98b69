import { expect } from 'chai';
import {
  TRAY_RECORD_CLAIMS,
  TRAY_RECORDS,
} from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { type TrayRecordDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-records-collection.ts';
import {
  casUpdateRecords,
  UPDATES_PER_BULK,
  type ComputeRecord,
} from '../../../../../tray-service/storage/mongodb/compare-and-set/cas-update-records.ts';
import { claimVersions } from '../../../../../tray-service/storage/mongodb/compare-and-set/claim-versions.ts';
import type { RecordClaimDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-record-claims-collection.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';
import { trayCollections } from '../../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
import { aTrayRecord } from '../../../../support/tray-record-builder.ts';
import { claimFor } from '../support/claim-for.ts';
import { withCollectionMethod } from '../../../../support/with-collection-method.ts';

describe('casUpdateRecords: changedAt and onWritten (what live streams are told)', () => {
  const mongo = useMongo();
  before(() => ensureTestCollections(mongo.db, trayCollections));
  const records = () => mongo.db.collection<TrayRecordDoc>(TRAY_RECORDS);
  /** A writer's change: one more actor counted, one version up. */
  const oneMoreActor: ComputeRecord = (_key, current) =>
    current
      ? { ...current, actorsCount: current.actorsCount + 1, version: current.version + 1 }
      : 'unchanged';
  /** A delivery: one more actor, the record unread again; `fresh` where there is no record. */
  const deliveryOf =
    (fresh?: TrayRecordDoc): ComputeRecord =>
    (_key, current) =>
      current
        ? { ...current, hasRead: false, actorsCount: current.actorsCount + 1, version: current.version + 1 }
        : (fresh ?? 'unchanged');
  /**
   * The database with a records bulk that answers its first call, after `meanwhile`, as if another
   * caller's update in the shared bulk had missed; `missed()` tells whether it did.
   */
  function bulkMissingOnce(meanwhile: () => Promise<void> = () => Promise.resolve()) {
    let missed = false;
    const db = withCollectionMethod(
      mongo.db,
      TRAY_RECORDS,
      'bulkWrite',
      (bulkWrite) =>
        async (...args: Parameters<typeof bulkWrite>) => {
          const result = await bulkWrite(...args);
          if (missed) return result;
          missed = true;
          await meanwhile();
          return Object.assign(Object.create(result) as typeof result, {
            matchedCount: result.matchedCount - 1,
          });
        },
    );
    return { db, missed: () => missed };
  }

  it('stamps every inserted and updated state with the writer’s clock and reports it as stored', async () => {
    const existing = aTrayRecord({ userId: 'u-1', targetId: 'p-old' });
    await records().insertOne(existing);
    const fresh = aTrayRecord({ userId: 'u-1', targetId: 'p-new' });
    const told: TrayRecordDoc[] = [];
    await casUpdateRecords(
      mongo.db,
      [existing._id, fresh._id],
      (key, current) =>
        current
          ? { ...current, hasRead: true, version: current.version + 1 }
          : key === fresh._id
            ? fresh
            : 'unchanged',
      { owner: 'test', now: () => 1_234, onWritten: async (written) => void told.push(...written) },
    );
    expect(told.map((record) => [record._id, record.changedAt]).sort()).to.deep.equal(
      [
        [existing._id, 1_234],
        [fresh._id, 1_234],
      ].sort(),
    );
    for (const record of told) expect(await records().findOne({ _id: record._id })).to.deep.equal(record);
  });

  it('reports nothing for a record left unchanged', async () => {
    const told: TrayRecordDoc[] = [];
    const record = aTrayRecord({ userId: 'u-2' });
    await records().insertOne(record);
    await casUpdateRecords(mongo.db, [record._id], () => 'unchanged', {
      owner: 'test',
      onWritten: async (written) => void told.push(...written),
    });
    expect(told).to.deep.equal([]);
  });

  it('reports each state written by concurrent writers exactly once, the stored one last', async () => {
    const record = aTrayRecord({ userId: 'u-3', actorsCount: 0 });
    await records().insertOne(record);
    const told: TrayRecordDoc[] = [];
    const writers = 8;
    const results = await Promise.all(
      Array.from({ length: writers }, (_, i) =>
        casUpdateRecords(mongo.db, [record._id], oneMoreActor, {
          owner: `writer-${i}`,
          onWritten: async (written) => void told.push(...written),
        }),
      ),
    );
    // They did collide: at least one writer had to read and compute again.
    expect(Math.max(...results.map((result) => result.rounds))).to.be.above(1);
    const stored = await records().findOne({ _id: record._id });
    expect(stored?.actorsCount).to.equal(writers);
    expect(told.map((state) => state.version).sort((a, b) => a - b)).to.deep.equal(
      Array.from({ length: writers }, (_, i) => record.version + 1 + i),
    );
    expect(told.find((state) => state.version === stored?.version)).to.deep.equal(stored);
  });

  // A removal deletes a record behind a claim of its next version; a delivery that read the
  // removal's tombstone before it was stored then creates the record again, on the same tray clock.
  it('starts a record created again after its deletion at a version no claim of its previous life holds', async () => {
    const record = aTrayRecord({ userId: 'u-4', actorsCount: 1 });
    const create = () =>
      casUpdateRecords(mongo.db, [record._id], (_key, current) => (current ? 'unchanged' : record), {
        owner: 'delivery',
        now: () => 1_234,
      });
    await create();
    const first = await records().findOne({ _id: record._id });
    if (!first) throw new Error('not created');
    const won = await claimVersions(
      mongo.db,
      [{ recordId: record._id, version: first.version + 1, state: 'deleted' }],
      { owner: 'removal', takeoverMs: 60_000 },
    );
    expect([...won]).to.deep.equal([record._id]);
    await records().deleteOne({ _id: record._id, version: first.version });
    await create();
    const again = await records().findOne({ _id: record._id });
    expect(again?.version).to.not.equal(first.version);
    const grown = await casUpdateRecords(mongo.db, [record._id], oneMoreActor, {
      owner: 'another-delivery',
      now: () => 1_234,
    });
    expect(grown).to.deep.equal({ written: 1, rounds: 1, left: [] });
    expect(await records().findOne({ _id: record._id })).to.include({ actorsCount: 2 });
  });

  // A bulk shared with other callers reports only its total: one caller's miss (its record just
  // deleted) sends every caller of the bulk to read its records again. A record another writer
  // moved past this call's write by then must not have this call's change applied once more: a
  // mark-read computed again over a delivery that came after it marked the new activity read.
  for (const claim of ['held', 'taken over'] as const)
    it(`takes its own write for landed when the record moved past it before the read again, its claim ${claim}`, async () => {
      const record = aTrayRecord({ userId: `u-5-${claim}`, hasRead: false, actorsCount: 1 });
      await records().insertOne(record);
      const delivery = deliveryOf();
      const markRead: ComputeRecord = (_key, current) =>
        current && !current.hasRead
          ? { ...current, hasRead: true, version: current.version + 1 }
          : 'unchanged';
      // The delivery lands after the mark, then the bulk answers as if another caller's update
      // had missed. A claim another writer took over (this call stalled past the takeover) proves
      // nothing: the change is computed again, as when nothing says it landed.
      const shared = bulkMissingOnce(async () => {
        await casUpdateRecords(mongo.db, [record._id], delivery, { owner: 'delivery' });
        if (claim === 'taken over')
          await mongo.db
            .collection<{ _id: string }>(TRAY_RECORD_CLAIMS)
            .updateOne({ _id: `${record._id}#${record.version + 1}` }, { $set: { owner: 'another' } });
      });
      await casUpdateRecords(shared.db, [record._id], markRead, { owner: 'mark' });
      expect(shared.missed()).to.equal(true);
      expect(await records().findOne({ _id: record._id })).to.include(
        claim === 'held'
          ? { hasRead: false, actorsCount: 2, version: record.version + 2 }
          : { hasRead: true, actorsCount: 2, version: record.version + 3 },
      );
    });

  // Reported as the later writer's state, a mark's announcement carried that writer's change time:
  // a live stream sent the mark for it, counted it as sent, and dropped the writer's own
  // announcement (the record's new activity) as one it had already delivered.
  it('reports its own write, not the state that moved past it, when it takes that write for landed', async () => {
    const record = aTrayRecord({ userId: 'u-5-reported', hasRead: false, actorsCount: 1, changedAt: 1_000 });
    await records().insertOne(record);
    const markRead: ComputeRecord = (_key, current) =>
      current && !current.hasRead ? { ...current, hasRead: true, version: current.version + 1 } : 'unchanged';
    const shared = bulkMissingOnce(async () => {
      await casUpdateRecords(mongo.db, [record._id], deliveryOf(), { owner: 'delivery', now: () => 3_000 });
    });
    const told: [TrayRecordDoc, number | undefined][] = [];
    await casUpdateRecords(shared.db, [record._id], markRead, {
      owner: 'mark',
      now: () => 2_000,
      onWritten: async (docs, replaced) =>
        void told.push(
          ...docs.map((doc) => [doc, replaced.get(doc._id)] as [TrayRecordDoc, number | undefined]),
        ),
    });
    expect(shared.missed()).to.equal(true);
    expect(
      told.map(([doc, before]) => [doc.hasRead, doc.actorsCount, doc.changedAt, doc.version, before]),
    ).to.deep.equal([[true, 1, 2_000, record.version + 1, 1_000]]);
  });

  // The same shared-bulk miss, and the user's delete-all before the read again: the record is gone
  // because the delete came after this call's write (its claim of that version still names it),
  // and creating it again from nothing would bring the cleared tray's record back.
  it('leaves a record deleted after its write landed (a delete-all between the bulk and the read again) deleted', async () => {
    const record = aTrayRecord({ userId: 'u-cleared', hasRead: true, actorsCount: 1 });
    await records().insertOne(record);
    const shared = bulkMissingOnce();
    const clearBeforeReadingAgain = async () => {
      await records().deleteMany({ userId: record.userId });
    };
    await casUpdateRecords(
      shared.db,
      [record._id],
      deliveryOf({ ...record, hasRead: false, actorsCount: 1 }),
      {
        owner: 'delivery',
        backOff: clearBeforeReadingAgain,
      },
    );
    expect(shared.missed()).to.equal(true);
    expect(await records().countDocuments({ userId: record.userId })).to.equal(0);
  });

  // The other order: a record past its expiry deleted (the TTL index, the purge) before this call's
  // update, which then missed. The claim it holds proves nothing landed: its activity starts the
  // record's new life instead of being dropped.
  it('creates a record again whose expiry had passed and which was deleted before its update landed', async () => {
    const record = aTrayRecord({
      userId: 'u-expired',
      actorsCount: 1,
      expiresAt: new Date(Date.now() - 1_000),
    });
    await records().insertOne(record);
    const renewed = new Date(Date.now() + 86_400_000);
    const delivery: ComputeRecord = (_key, current) =>
      current
        ? {
            ...current,
            actorsCount: current.actorsCount + 1,
            expiresAt: renewed,
            version: current.version + 1,
          }
        : { ...record, actorsCount: 1, expiresAt: renewed };
    const deletedFirst = withCollectionMethod(
      mongo.db,
      TRAY_RECORDS,
      'bulkWrite',
      (bulkWrite) =>
        async (...args: Parameters<typeof bulkWrite>) => {
          await records().deleteOne({ _id: record._id });
          return bulkWrite(...args);
        },
    );
    await casUpdateRecords(deletedFirst, [record._id], delivery, {
      owner: 'delivery',
      backOff: () => Promise.resolve(),
    });
    expect(await records().findOne({ _id: record._id })).to.include({ actorsCount: 1 });
  });

  // A fan-out works from the group's records read once, minutes before it reaches a member's batch
  // on a slow server. Its claim of the version after its snapshot then meets the claim of a write
  // that landed long ago: taking that over freed the version for a second stale writer, whose
  // update missed, and whose later check took the record's newer version for its own write.
  it('never takes over the claim of a version that was written: writers on a stale snapshot read again, and each change lands', async () => {
    const record = aTrayRecord({ userId: 'u-stale', hasRead: false, actorsCount: 1 });
    await records().insertOne(record);
    const delivery = deliveryOf();
    const markRead: ComputeRecord = (_key, current) =>
      current ? { ...current, hasRead: true, version: current.version + 1 } : 'unchanged';
    await casUpdateRecords(mongo.db, [record._id], markRead, { owner: 'mark' });
    // The mark's claim is older than the takeover by the time the fan-outs reach this member.
    await mongo.db
      .collection<RecordClaimDoc>(TRAY_RECORD_CLAIMS)
      .updateOne(
        { _id: `${record._id}#${record.version + 1}` },
        { $set: { claimedAt: new Date(Date.now() - 61_000) } },
      );
    const stale = new Map([[record._id, record]]);
    const backOff = () => Promise.resolve();
    for (const owner of ['fan-out-a', 'fan-out-b'])
      await casUpdateRecords(mongo.db, [record._id], delivery, { owner, first: stale, backOff });
    expect(await records().findOne({ _id: record._id })).to.include({
      hasRead: false,
      actorsCount: 3,
      version: record.version + 3,
    });
  });

  describe('under contention', () => {
    /** Waits that return at once, each recorded with the round it was told; `between` runs in each. */
    function recordedWaits(between: (wait: number) => Promise<void> = () => Promise.resolve()) {
      const waits: number[] = [];
      const backOff = async (round: number) => {
        waits.push(round);
        await between(waits.length);
      };
      return { waits, backOff };
    }

    it('keeps trying a record a concurrent writer moves every round, for more than 60 rounds, and writes it once its turn comes', async () => {
      const record = aTrayRecord({ userId: 'u-busy', actorsCount: 1 });
      await records().insertOne(record);
      // The other writer always holds the version after the record's current one, so every claim
      // of this call is lost while the record moves on.
      let current = record.version;
      await claimFor(mongo.db, 'busy-writer', record._id, current + 1);
      const MOVES = 80;
      const { waits, backOff } = recordedWaits(async (wait) => {
        if (wait > MOVES) {
          await mongo.db
            .collection<{ _id: string }>(TRAY_RECORD_CLAIMS)
            .deleteOne({ _id: `${record._id}#${current + 1}` });
          return;
        }
        await claimFor(mongo.db, 'busy-writer', record._id, current + 2);
        await records().updateOne(
          { _id: record._id, version: current },
          { $inc: { actorsCount: 1, version: 1 } },
        );
        current += 1;
      });
      const result = await casUpdateRecords(mongo.db, [record._id], oneMoreActor, {
        owner: 'delivery',
        backOff,
      });
      expect(result).to.deep.equal({ written: 1, rounds: MOVES + 2, left: [] });
      expect(await records().findOne({ _id: record._id })).to.include({ actorsCount: 1 + MOVES + 1 });
      // Each round saw the record move: the back-off never grew.
      expect(new Set(waits)).to.deep.equal(new Set([1]));
    });

    it('gives up after 60 rounds in a row in which a claim holds the record unmoved, naming it, backing off longer each round', async () => {
      const record = aTrayRecord({ userId: 'u-held', actorsCount: 1 });
      await records().insertOne(record);
      await claimFor(mongo.db, 'a-stopped-writer', record._id, record.version + 1);
      const { waits, backOff } = recordedWaits();
      await expect(
        casUpdateRecords(mongo.db, [record._id], oneMoreActor, { owner: 'delivery', backOff }),
      ).to.be.rejectedWith(`tray records ${record._id} still contended after 60 rounds without progress`);
      expect(waits).to.deep.equal(Array.from({ length: 60 }, (_, index) => index + 1));
      expect(await records().findOne({ _id: record._id })).to.include({
        actorsCount: 1,
        version: record.version,
      });
    });
  });

  // Updates are written in bulks of UPDATES_PER_BULK, and onWritten was told only after the last:
  // a later bulk failing left the earlier ones stored but untold, so a mark's PartialWriteError
  // (and the live streams it feeds) missed up to a thousand records per bulk.
  it('tells onWritten of the bulks it wrote before one failed, then fails as it did', async function () {
    this.timeout(60_000);
    const many = Array.from({ length: UPDATES_PER_BULK + 5 }, (_, n) =>
      aTrayRecord({ userId: 'u-bulks', targetId: `p-bulk-${n}`, hasRead: false }),
    );
    await records().insertMany(many);
    let bulks = 0;
    const secondFails = withCollectionMethod(
      mongo.db,
      TRAY_RECORDS,
      'bulkWrite',
      (bulkWrite) =>
        async (...args: Parameters<typeof bulkWrite>) => {
          bulks += 1;
          if (bulks === 2) throw new Error('the database went away');
          return bulkWrite(...args);
        },
    );
    const told: TrayRecordDoc[] = [];
    const markRead: ComputeRecord = (_key, current) =>
      current ? { ...current, hasRead: true, version: current.version + 1 } : 'unchanged';
    await expect(
      casUpdateRecords(
        secondFails,
        many.map((record) => record._id),
        markRead,
        { owner: 'mark', onWritten: async (docs) => void told.push(...docs) },
      ),
    ).to.be.rejectedWith('the database went away');
    const stored = await records().find({ userId: 'u-bulks', hasRead: true }).toArray();
    expect(stored).to.have.lengthOf(UPDATES_PER_BULK);
    expect(told.map((doc) => doc._id).sort()).to.deep.equal(stored.map((doc) => doc._id).sort());
  });

  // A round of a whole group (a post deleted in a community of 100,000: a hundred bulks) took its
  // clock once and told everything after the last bulk: the first bulks' records reached live
  // streams seconds past their stamp, beyond a stream's settle window (domain/settle-window.ts),
  // and a stream that delivered a later change meanwhile and reconnected never got them.
  // The claims of a whole round were taken before its first bulk: on a loaded server, a round of
  // tens of bulks outlasted the takeover (60 s), and another writer took over the later bulks'
  // claims while this call still wrote them, and wrote the same version: one change lost.
  it('claims each bulk’s versions just before it sends that bulk', async function () {
    this.timeout(60_000);
    const many = Array.from({ length: UPDATES_PER_BULK + 5 }, (_, n) =>
      aTrayRecord({ userId: 'u-claims', targetId: `p-claim-${n}`, hasRead: false }),
    );
    await records().insertMany(many);
    const slow = withCollectionMethod(
      mongo.db,
      TRAY_RECORDS,
      'bulkWrite',
      (bulkWrite) =>
        async (...args: Parameters<typeof bulkWrite>) => {
          await new Promise((resolve) => setTimeout(resolve, 500));
          return bulkWrite(...args);
        },
    );
    await casUpdateRecords(
      slow,
      many.map((record) => record._id),
      oneMoreActor,
      { owner: 'claims-per-bulk' },
    );
    const claimedAt = async (record: TrayRecordDoc) =>
      (
        await mongo.db
          .collection<RecordClaimDoc>(TRAY_RECORD_CLAIMS)
          .findOne({ _id: `${record._id}#${record.version + 1}` })
      )?.claimedAt.getTime();
    const first = await claimedAt(many[0]!);
    const last = await claimedAt(many.at(-1)!);
    expect(first, 'the first bulk’s claim').to.be.a('number');
    expect(last! - first!, 'ms between the first and the last bulk’s claims').to.be.at.least(400);
  });

  it('stamps each bulk when it sends it and tells it once it is stored', async function () {
    this.timeout(60_000);
    const many = Array.from({ length: 2 * UPDATES_PER_BULK + 5 }, (_, n) =>
      aTrayRecord({ userId: 'u-stamps', targetId: `p-stamp-${n}`, hasRead: false }),
    );
    await records().insertMany(many);
    // The writer's clock moves 10 s at every reading: as if each bulk took that long.
    let clock = 2_000_000;
    const tellings: { at: number; stamps: number[] }[] = [];
    await casUpdateRecords(
      mongo.db,
      many.map((record) => record._id),
      oneMoreActor,
      {
        owner: 'stamps',
        now: () => (clock += 10_000),
        onWritten: async (docs) =>
          void tellings.push({ at: clock, stamps: docs.map((doc) => doc.changedAt ?? 0) }),
      },
    );
    expect(tellings.map((telling) => telling.stamps.length)).to.deep.equal([
      UPDATES_PER_BULK,
      UPDATES_PER_BULK,
      5,
    ]);
    for (const { at, stamps } of tellings)
      for (const stamp of stamps) expect(at - stamp, 'told within the bulk it was stamped for').to.equal(0);
    const stored = await records().find({ userId: 'u-stamps' }).toArray();
    const told = new Map(tellings.flatMap(({ stamps }, index) => stamps.map((stamp) => [stamp, index])));
    expect(told.size, 'a stamp per bulk').to.equal(3);
    expect(new Set(stored.map((doc) => doc.changedAt)).size).to.equal(3);
  });
});

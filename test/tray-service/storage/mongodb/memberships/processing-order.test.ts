import { expect } from 'chai';
import type { Db } from 'mongodb';
import { TRAY_PROCESSING_ORDER } from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import {
  processingOrderCollection,
  type ProcessingOrderDoc,
} from '../../../../../tray-service/storage/mongodb/collections/processing-order-collection.ts';
import { nextProcessed } from '../../../../../tray-service/storage/mongodb/memberships/processing-order.ts';
import { StorageBusyError } from '../../../../../tray-service/storage/storage-busy-error.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';
import { withCollectionMethod } from '../../../../support/with-collection-method.ts';

/**
 * `db`, whose first `find` on the processing order (the allocator's read of the highest block)
 * returns only after `gate`: an allocator slowed down between its read and its insert, on the real
 * server.
 */
function slowAfterFirstRead(db: Db, gate: Promise<void>, onRead: () => void): Db {
  let slowed = false;
  return withCollectionMethod(
    db,
    TRAY_PROCESSING_ORDER,
    'find',
    (find) =>
      ((...args: Parameters<typeof find>) => {
        const cursor = find(...args);
        if (slowed) return cursor;
        slowed = true;
        return Object.assign(Object.create(cursor) as typeof cursor, {
          toArray: async () => {
            const docs = await cursor.toArray();
            onRead();
            await gate;
            return docs;
          },
        });
      }) as typeof find,
  );
}

describe('the processing order of joins, leaves and kept actions (MongoDB-compatible server)', () => {
  const mongo = useMongo();
  before(() => ensureTestCollections(mongo.db, [processingOrderCollection]));
  beforeEach(() => mongo.db.collection(TRAY_PROCESSING_ORDER).deleteMany({}));

  it('hands out places from 2 on (0 and 1 are what was stored before), each once, in blocks', async () => {
    const first = await nextProcessed(mongo.db, 3);
    const second = await nextProcessed(mongo.db, 1);
    expect([first, second]).to.deep.equal([2, 5]);
  });

  it('never hands one place out twice to allocations at once, and each later one is higher', async () => {
    const starts = await Promise.all(Array.from({ length: 12 }, () => nextProcessed(mongo.db, 2)));
    const places = starts.flatMap((start) => [start, start + 1]).sort((a, b) => a - b);
    expect(new Set(places).size).to.equal(places.length);
    const after = await nextProcessed(mongo.db, 1);
    expect(after).to.be.above(Math.max(...places));
  });

  // Thrown as a plain Error, the job spent an attempt on others' traffic; as StorageBusyError the
  // worker waits and runs it again, as for any write that could not get its turn.
  it('gives up after its rounds with StorageBusyError, each round lost to another allocation', async () => {
    const tries = await Promise.allSettled(
      Array.from({ length: 12 }, () => nextProcessed(mongo.db, 1, { maxRounds: 2 })),
    );
    const refused = tries.flatMap((tried) => (tried.status === 'rejected' ? [tried.reason as unknown] : []));
    expect(refused, 'allocations that gave up').to.not.deep.equal([]);
    for (const reason of refused)
      expect(reason).to.be.instanceOf(StorageBusyError).with.property('message').that.includes('2 rounds');
    const places = tries.flatMap((tried) => (tried.status === 'fulfilled' ? [tried.value] : []));
    expect(new Set(places).size, 'places handed out twice').to.equal(places.length);
  });

  it('keeps few blocks: those more than a few dozen places behind the newest are deleted', async () => {
    for (let index = 0; index < 300; index++) await nextProcessed(mongo.db, 1);
    expect(await mongo.db.collection(TRAY_PROCESSING_ORDER).countDocuments()).to.be.at.most(40);
    expect(await nextProcessed(mongo.db, 1)).to.equal(302);
  });

  // The interleaving deleting blocks often opens: a slow allocator read block H as the highest;
  // meanwhile others allocated far past it and deleted H and the block after it; the slow one's
  // insert of the place after H then succeeds. It must not hand that place out again.
  for (const [label, before] of [
    ['a block', 1],
    ['nothing (the first allocation)', 0],
  ] as const) {
    it(`never hands a place out twice to an allocator that read ${label} as the highest, and the blocks after it were deleted before it inserted`, async () => {
      const given: number[] = [];
      for (let index = 0; index < before; index++) given.push(await nextProcessed(mongo.db, 1));
      let release = () => {};
      const gate = new Promise<void>((resolve) => (release = resolve));
      let read = () => {};
      const hasRead = new Promise<void>((resolve) => (read = resolve));
      const slow = nextProcessed(slowAfterFirstRead(mongo.db, gate, read), 1);
      await hasRead;
      for (let index = 0; index < 100; index++) given.push(await nextProcessed(mongo.db, 1));
      expect(
        await mongo.db
          .collection<ProcessingOrderDoc>(TRAY_PROCESSING_ORDER)
          .countDocuments({ _id: { $lte: 3 } }),
      ).to.equal(0);
      release();
      given.push(await slow);
      expect(new Set(given).size, given.join(',')).to.equal(given.length);
      expect(await nextProcessed(mongo.db, 1)).to.be.above(Math.max(...given));
    });
  }
});

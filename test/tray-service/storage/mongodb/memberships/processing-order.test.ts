import { expect } from 'chai';
import { TRAY_PROCESSING_ORDER } from '../../../../../tray-service/storage/mongodb/collection-names.ts';
import { processingOrderCollection } from '../../../../../tray-service/storage/mongodb/memberships/processing-order-collection.ts';
import { nextProcessed } from '../../../../../tray-service/storage/mongodb/memberships/processing-order.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';

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
});

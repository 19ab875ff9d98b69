import { expect } from 'chai';
import { createMongoBlockList } from '../../../../../tray-service/storage/mongodb/block-list/mongo-block-list.ts';
import { blockListCollection } from '../../../../../tray-service/storage/mongodb/collections/block-list-collection.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';

describe('block list repository', () => {
  const mongo = useMongo();
  before(() => ensureTestCollections(mongo.db, [blockListCollection]));

  it('keeps one entry when the same block arrives concurrently', async () => {
    const repo = createMongoBlockList(mongo.db);
    await Promise.all(Array.from({ length: 8 }, () => repo.block('n_owner', 'target')));
    expect((await repo.page('n_owner', undefined, 20)).results).to.deep.equal([
      { netid_uid: 'n_owner', blocked_userId: 'target' },
    ]);
  });
});

import { expect } from 'chai';
import { createBlockListRepository } from '../../../tray-service/store/block-list-repository.ts';
import { ensureApiIndexes } from '../../../tray-service/store/ensure-api-indexes.ts';
import { useMongo } from '../../support/suite-resources.ts';

describe('block list repository', () => {
  const mongo = useMongo();
  before(() => ensureApiIndexes(mongo.db));

  it('keeps one entry when the same block arrives concurrently', async () => {
    const repo = createBlockListRepository(mongo.db);
    await Promise.all(Array.from({ length: 8 }, () => repo.block('n_owner', 'target')));
    expect((await repo.page('n_owner', undefined, 20)).results).to.deep.equal([
      { netid_uid: 'n_owner', blocked_userId: 'target' },
    ]);
  });

  it('creates its indexes again without error (start-up is repeatable)', async () => {
    await ensureApiIndexes(mongo.db);
    const names = (await mongo.db.collection('tray_records').indexes()).map((index) => index.name);
    expect(names).to.include.members(['api_user_history', 'api_user_target_verb']);
  });
});

import { expect } from 'chai';
import { createReadStateRepository } from '../../../../tray-service/storage/mongodb/read-state-repository.ts';
import { useMongo } from '../../../support/suite-resources.ts';

describe('read state repository', () => {
  const mongo = useMongo();

  it('answers 0 for a user who never read, then the latest time, never moving backwards', async () => {
    const repo = createReadStateRepository(mongo.db);
    expect(await repo.lastReadAt('u1')).to.equal(0);
    // Concurrent calls from two instances, arriving out of order.
    await Promise.all([
      repo.markLastRead('u1', 2000),
      repo.markLastRead('u1', 1000),
      repo.markLastRead('u1', 1500),
    ]);
    expect(await repo.lastReadAt('u1')).to.equal(2000);
    expect(await repo.lastReadAt('u2')).to.equal(0);
  });
});

import { expect } from 'chai';
import { deleteAll } from '../../../tray-service/use-cases/delete-all.ts';
import { seedRecords } from '../../support/seed-tray.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';

const NOW = Date.UTC(2026, 0, 15, 12);

describe('deleteAll (DELETE v3/delete-all, every transport)', () => {
  const suite = useTrayStorage();

  // The records go first, then the clear's time is stored. A failure between the two (the
  // database dropping the connection) answered an error with no `cleared` told: the user's open
  // streams kept showing records already gone until the client tried again.
  it('tells the streams `cleared` when storing the time fails after the records went, then fails', async () => {
    const userId = 'u-delete-half';
    await seedRecords(suite.storage, [{ userId, lastUpdate: NOW - 60_000 }]);
    const clears = Object.assign(Object.create(suite.storage.clears) as typeof suite.storage.clears, {
      record: () => Promise.reject(new Error('connection terminated unexpectedly')),
    });
    const told: [string, number][] = [];
    const changes = { cleared: async (user: string, at: number) => void told.push([user, at]) };
    const failed = await deleteAll({ records: suite.storage.records, clears }, changes, userId, NOW).then(
      () => expect.fail('the clear was stored'),
      (error: unknown) => error as Error,
    );
    expect(failed.message).to.equal('connection terminated unexpectedly');
    expect(told).to.deep.equal([[userId, NOW]]);
  });

  it('tells nothing when the records could not be deleted', async () => {
    const records = Object.assign(Object.create(suite.storage.records) as typeof suite.storage.records, {
      deleteAll: () => Promise.reject(new Error('connection terminated unexpectedly')),
    });
    const told: string[] = [];
    const changes = { cleared: async (user: string) => void told.push(user) };
    await deleteAll({ records, clears: suite.storage.clears }, changes, 'u-delete-none', NOW).then(
      () => expect.fail('the records were deleted'),
      () => undefined,
    );
    expect(told).to.deep.equal([]);
  });
});

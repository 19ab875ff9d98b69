import { expect } from 'chai';
import { createHistoryPages } from '../../../tray-service/use-cases/history-page.ts';
import { seedRecords } from '../../support/seed-tray.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';

const NOW = Date.UTC(2026, 0, 15, 12);
const PAGE_SIZE = 5;

describe('history pages (GET v2 and v3, every transport)', () => {
  const suite = useTrayStorage();

  const seed = (userId: string, count: number, from: number) =>
    seedRecords(
      suite.storage,
      Array.from({ length: count }, (_, n) => ({ userId, lastUpdate: NOW - 60_000 + from + n })),
    );

  // totalPages comes from a count reused for 5 s; records written in between (another instance's
  // unarchive, a wake-up, deliveries) are read fresh but not counted. A client that loops v2's
  // totalPages times stopped on a full page and never asked for the records after it.
  it('v2: a full page the reused count calls the last is counted again', async () => {
    const userId = 'u-v2-grown';
    const pages = createHistoryPages(suite.storage, PAGE_SIZE);
    await seed(userId, 3, 0);
    expect((await pages.v2(userId, 1, NOW)).totalPages).to.equal(1);
    await seed(userId, 9, 100);
    const first = await pages.v2(userId, 1, NOW);
    expect(first.records).to.have.length(PAGE_SIZE);
    expect(first.totalPages).to.equal(3);
    const third = await pages.v2(userId, 3, NOW);
    expect(third.records).to.have.length(2);
    expect(third.totalPages).to.equal(3);
  });

  // The recount is for a count that is short, not for one that ends where a full page does.
  it('v2: a full last page of an exact count is not counted again while the count is reused', async () => {
    const userId = 'u-v2-exact';
    let counted = 0;
    const records = Object.assign(Object.create(suite.storage.records) as typeof suite.storage.records, {
      count: (...args: Parameters<typeof suite.storage.records.count>) => (
        (counted += 1),
        suite.storage.records.count(...args)
      ),
    });
    const pages = createHistoryPages({ ...suite.storage, records }, PAGE_SIZE);
    await seed(userId, PAGE_SIZE, 0);
    for (let call = 0; call < 3; call++) {
      const first = await pages.v2(userId, 1, NOW);
      expect(first.records).to.have.length(PAGE_SIZE);
      expect(first.totalPages).to.equal(1);
    }
    expect(counted).to.equal(1);
  });
});

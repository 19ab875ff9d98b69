import { expect } from 'chai';
import fc from 'fast-check';
import { HOUR_MS } from '../../../../../shared/time/durations.ts';
import type { TrayVerb } from '../../../../../tray-service/domain/tray-verb.ts';
import type { TrayRecordDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-records-collection.ts';
import {
  createSortedPages,
  type SortedPages,
} from '../../../../../tray-service/storage/mongodb/records/sorted-pages.ts';
import { trayRecordsCollection } from '../../../../../tray-service/storage/mongodb/collections/tray-records-collection.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';
import { aTrayRecord, insertRecords } from '../../../../support/tray-record-builder.ts';

const NOW = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;

/** Every v3 page from the first on, as the lists of record ids a client would be shown. */
async function walkPages(queries: SortedPages, userId: string, pageSize: number): Promise<string[][]> {
  const pages: string[][] = [];
  let startAfter: number | undefined;
  for (let guard = 0; guard < 100; guard++) {
    const page = await queries.pageAfter(userId, startAfter, pageSize, NOW, undefined);
    pages.push(page.records.map((record) => record._id));
    if (page.nextPage === 0) return pages;
    startAfter = page.nextPage;
  }
  throw new Error('pages never ended');
}

/** The contract's order (newest first, ties by `_id` descending), as the reference. */
const newestFirst = (records: readonly TrayRecordDoc[]) =>
  [...records].sort((a, b) => b.lastUpdate - a.lastUpdate || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0));

// A page is the user_history index's order with a limit: the contract's order, whole groups of
// equal lastUpdate per v3 page, and v2 pages without mentions.
describe('history pages in index order', function () {
  this.timeout(120_000);
  const mongo = useMongo();
  let sorted: SortedPages;

  before(async () => {
    await ensureTestCollections(mongo.db, [trayRecordsCollection]);
    sorted = createSortedPages(mongo.db);
  });

  it('gives every live record once, newest first, never splitting records of equal lastUpdate', async () => {
    const verbs: TrayVerb[] = ['comment', 'mention', 'reaction'];
    const history = fc.array(
      fc.record({
        // Few distinct times, so ties across page ends are common; some expired records too.
        hoursAgo: fc.integer({ min: 0, max: 6 }),
        tie: fc.integer({ min: 0, max: 2 }),
        verb: fc.constantFrom(...verbs),
        expired: fc.integer({ min: 0, max: 4 }).map((draw) => draw === 0),
      }),
      { minLength: 0, maxLength: 25 },
    );
    let run = 0;
    await fc.assert(
      fc.asyncProperty(history, fc.integer({ min: 1, max: 6 }), async (entries, pageSize) => {
        const userId = `u-${run++}`;
        const records = entries.map((entry, index) => {
          const lastUpdate = NOW - entry.hoursAgo * HOUR_MS - entry.tie * 1_000;
          return aTrayRecord({
            userId,
            verb: entry.verb,
            targetId: `t-${index}`,
            lastUpdate,
            ...(entry.expired ? { expiresAt: new Date(NOW - 1) } : {}),
          });
        });
        await insertRecords(mongo.db, records);
        const live = newestFirst(records.filter((record) => record.expiresAt.getTime() > NOW));

        const pages = await walkPages(sorted, userId, pageSize);
        expect(pages.flat()).to.deep.equal(live.map((record) => record._id));
        const byId = new Map(live.map((record) => [record._id, record.lastUpdate]));
        for (let i = 1; i < pages.length; i++) {
          const before = byId.get(pages[i - 1]?.at(-1) ?? '');
          const first = byId.get(pages[i]?.[0] ?? '');
          if (before !== undefined && first !== undefined) expect(first).to.be.below(before);
        }

        const shown = live.filter((record) => record.verb !== 'mention');
        for (let page = 1; page <= Math.ceil(shown.length / pageSize) + 1; page++) {
          const expected = shown.slice((page - 1) * pageSize, page * pageSize).map((record) => record._id);
          const fromIndex = (await sorted.pageNumber(userId, page, pageSize, NOW, ['mention'])).map(
            (record) => record._id,
          );
          expect(fromIndex, `v2 page ${page}`).to.deep.equal(expected);
        }
      }),
      { numRuns: 40 },
    );
  });

  it('shows a group of equal lastUpdate longer than a page’s fetch whole on one page', async () => {
    const older = aTrayRecord({ userId: 'u-tie', targetId: 'old', lastUpdate: NOW - HOUR_MS });
    const tied = Array.from({ length: 9 }, (_, index) =>
      aTrayRecord({ userId: 'u-tie', targetId: `t-${index}`, lastUpdate: NOW - 1_000 }),
    );
    await insertRecords(mongo.db, [older, ...tied]);
    const pages = await walkPages(sorted, 'u-tie', 2);
    expect(pages.map((page) => page.length)).to.deep.equal([9, 1]);
  });
});

import { expect } from 'chai';
import { createTrayClient, TrayApiError, type NotificationRecord } from '../../../client/src/index.ts';
import { seedRecords } from '../../support/seed-tray.ts';
import { tokensOf, useServedTrayApi } from '../support/serve-tray-api.ts';

const MIN = 60_000;
const NOW = Date.now();

describe('the client’s tray methods against the tray API (real PostgreSQL and Redis; 10 records a page)', () => {
  const api = useServedTrayApi();
  const clientOf = (userId: string, options: { locale?: string; fetch?: typeof fetch } = {}) =>
    createTrayClient({ baseUrl: api.baseUrl, getToken: tokensOf(userId), ...options });

  describe('counts()', () => {
    it('answers the caller’s unread count, and not another user’s', async () => {
      await seedRecords(api.harness.storage, [
        { userId: 'counts-user', targetId: 'a', lastUpdate: NOW - 3 * MIN },
        { userId: 'counts-user', targetId: 'b', lastUpdate: NOW - 2 * MIN },
        { userId: 'counts-user', targetId: 'c', lastUpdate: NOW - MIN, hasRead: true },
        { userId: 'counts-other', targetId: 'd', lastUpdate: NOW - MIN },
      ]);
      expect(await clientOf('counts-user').counts()).to.deep.equal({
        totalUnreadCount: 2,
        totalUnseenCount: 2,
      });
    });
  });

  describe('history() across records sharing one lastUpdate', () => {
    const user = 'ties-user';
    const tied = NOW - 10 * MIN;
    before(async () => {
      // 4 newer records, then 23 records at one instant: the tie spans what would be pages 1 to 3.
      await seedRecords(api.harness.storage, [
        ...Array.from({ length: 4 }, (_, i) => ({
          userId: user,
          targetId: `new-${i}`,
          lastUpdate: NOW - i * MIN,
        })),
        ...Array.from({ length: 23 }, (_, i) => ({ userId: user, targetId: `tie-${i}`, lastUpdate: tied })),
        ...Array.from({ length: 8 }, (_, i) => ({
          userId: user,
          targetId: `old-${i}`,
          lastUpdate: tied - (i + 1) * MIN,
        })),
      ]);
    });

    it('yields every record exactly once, newest first, following nextPage', async () => {
      const pages: string[] = [];
      const counting: typeof fetch = (input, init) => {
        pages.push(String(input));
        return fetch(input, init);
      };
      const records: NotificationRecord[] = [];
      for await (const record of clientOf(user, { fetch: counting }).history()) records.push(record);

      expect(records).to.have.lengthOf(35);
      expect(new Set(records.map((record) => record.v_tarid_uid)).size).to.equal(35);
      expect(records.map((record) => record.lastUpdate)).to.deep.equal(
        records.map((record) => record.lastUpdate).sort((a, b) => b - a),
      );
      expect(records.map((record) => record.targetId).sort()).to.deep.equal(
        [
          ...Array.from({ length: 4 }, (_, i) => `new-${i}`),
          ...Array.from({ length: 23 }, (_, i) => `tie-${i}`),
          ...Array.from({ length: 8 }, (_, i) => `old-${i}`),
        ].sort(),
      );
      expect(records.filter((record) => record.lastUpdate === tied)).to.have.lengthOf(23);
      // The first page ends inside the tie, so it holds the whole tie; then the 8 older ones.
      expect(pages).to.have.lengthOf(2);
      expect(pages[1]).to.include(`startAfter=${tied}`);
    });

    it('fetches no further page once the loop stops', async () => {
      let calls = 0;
      const counting: typeof fetch = (input, init) => ((calls += 1), fetch(input, init));
      for await (const record of clientOf(user, { fetch: counting }).history()) {
        expect(record.targetId).to.equal('new-0');
        break;
      }
      expect(calls).to.equal(1);
    });

    it('historyPage() answers single pages: nextPage as the next startAfter, 0 on the last', async () => {
      const client = clientOf(user);
      const first = await client.historyPage();
      expect(first.totalPages).to.equal(4);
      expect(first.data).to.have.lengthOf(27);
      expect(first.nextPage).to.equal(tied);
      const last = await client.historyPage(first.nextPage);
      expect(last.data.map((record) => record.targetId)).to.deep.equal(
        Array.from({ length: 8 }, (_, i) => `old-${i}`),
      );
      expect(last.nextPage).to.equal(0);
      expect((await client.historyPage(0)).data).to.deep.equal([]);
    });
  });

  describe('with a locale', () => {
    it('gets the records’ descriptions in that locale', async () => {
      await seedRecords(api.harness.storage, [{ userId: 'locale-user', targetId: 'l1', lastUpdate: NOW }]);
      const [english] = (await clientOf('locale-user').historyPage()).data;
      const [german] = (await clientOf('locale-user', { locale: 'de' }).historyPage()).data;
      expect(english?.description).to.be.a('string').and.not.equal(german?.description);
      expect(german?.description).to.include('Ana');
    });
  });

  describe('read marks, last-read and delete-all', () => {
    let users = 0;
    /** A user of the test's own with two unread records (r1, then the newer r2). */
    const twoRecords = async () => {
      const user = `marks-user-${(users += 1)}`;
      await seedRecords(api.harness.storage, [
        { userId: user, verb: 'comment', targetId: 'r1', lastUpdate: NOW - 2 * MIN },
        { userId: user, verb: 'post', targetId: 'r2', lastUpdate: NOW - MIN },
      ]);
      return clientOf(user);
    };

    it('read() marks one record read', async () => {
      const client = await twoRecords();
      await client.read('comment', 'r1');
      const records = (await client.historyPage()).data;
      expect(records.map((record) => [record.targetId, record.hasRead])).to.deep.equal([
        ['r2', false],
        ['r1', true],
      ]);
      expect((await client.counts()).totalUnreadCount).to.equal(1);
    });

    it('read() of a record the caller does not have is a TrayApiError 404 with the service’s code', async () => {
      const client = await twoRecords();
      await seedRecords(api.harness.storage, [{ userId: 'marks-other', verb: 'post', targetId: 'theirs' }]);
      await expect(client.read('post', 'theirs'))
        .to.be.rejectedWith(TrayApiError)
        .and.eventually.include({ status: 404, code: 404000 });
      const [theirs] = (await clientOf('marks-other').historyPage()).data;
      expect(theirs?.hasRead).to.equal(false);
    });

    it('markAllAsRead() marks every record read', async () => {
      const client = await twoRecords();
      await client.markAllAsRead();
      expect((await client.historyPage()).data.map((record) => record.hasRead)).to.deep.equal([true, true]);
      expect((await client.counts()).totalUnreadCount).to.equal(0);
    });

    it('setLastRead() zeroes the unread count and leaves the records unread', async () => {
      const client = await twoRecords();
      await client.setLastRead();
      expect((await client.counts()).totalUnreadCount).to.equal(0);
      expect((await client.historyPage()).data.map((record) => record.hasRead)).to.deep.equal([false, false]);
    });

    it('deleteAll() removes every record of the caller', async () => {
      const client = await twoRecords();
      await client.deleteAll();
      expect(await client.historyPage()).to.deep.equal({ totalPages: 0, nextPage: 0, data: [] });
    });
  });

  describe('an input the service refuses', () => {
    it('is a TrayApiError 400 with the validation code and the service’s message', async () => {
      const refused = clientOf('refused-user').read('post', '');
      await expect(refused)
        .to.be.rejectedWith(TrayApiError, /targetId/)
        .and.eventually.include({
          status: 400,
          code: 400001,
        });
    });
  });
});

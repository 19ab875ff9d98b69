import { expect } from 'chai';
import {
  createTrayClient,
  TrayApiError,
  unauthorizedCodes,
  type NotificationRecord,
} from '../../../client/src/index.ts';
import { useClientTarget } from '../support/client-target.ts';
import { useScriptedServers } from '../support/scripted-servers.ts';

const MIN = 60_000;
const NOW = Date.now() - 60 * MIN;

describe('the client’s tray methods against the tray API (real PostgreSQL and Redis; 10 records a page)', function () {
  this.timeout(30_000);
  const target = useClientTarget();
  const clientOf = (userId: string, options: { locale?: string; fetch?: typeof fetch } = {}) =>
    createTrayClient({ baseUrl: target.baseUrl, getToken: () => target.token(userId), ...options });

  describe('counts()', () => {
    it('answers the caller’s unread count, and not another user’s', async () => {
      const user = target.user('counts-user');
      await target.seed(user, [
        { targetId: 'a', at: NOW - 3 * MIN },
        { targetId: 'b', at: NOW - 2 * MIN },
        { targetId: 'c', at: NOW - MIN, read: true },
      ]);
      await target.seed(target.user('counts-other'), [{ targetId: 'd', at: NOW - MIN }]);
      expect(await clientOf(user).counts()).to.deep.equal({
        totalUnreadCount: 2,
        totalUnseenCount: 2,
      });
    });
  });

  describe('history() across records sharing one lastUpdate', () => {
    const user = target.user('ties-user');
    const tied = NOW - 10 * MIN;
    before(async () => {
      // 4 newer records, then 23 records at one instant: the tie spans what would be pages 1 to 3.
      await target.seed(user, [
        ...Array.from({ length: 4 }, (_, i) => ({ targetId: `new-${i}`, at: NOW - i * MIN })),
        ...Array.from({ length: 23 }, (_, i) => ({ targetId: `tie-${i}`, at: tied })),
        ...Array.from({ length: 8 }, (_, i) => ({ targetId: `old-${i}`, at: tied - (i + 1) * MIN })),
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
      let taken = 0;
      const counting: typeof fetch = (input, init) => ((calls += 1), fetch(input, init));
      for await (const record of clientOf(user, { fetch: counting }).history()) {
        taken += 1;
        expect(record.targetId).to.equal('new-0');
        break;
      }
      expect(taken, 'records the loop took').to.equal(1);
      expect(calls).to.equal(1);
    });

    // The signal ends the walk, not only the next page's fetch: a loop that goes on after its
    // abort (shared with other work) got the rest of the page it was in.
    it('yields no further record once its signal aborts, inside a page too', async () => {
      const controller = new AbortController();
      const taken: string[] = [];
      const walk = async () => {
        for await (const record of clientOf(user).history({ signal: controller.signal })) {
          taken.push(record.targetId);
          controller.abort(new Error('enough'));
        }
      };
      await expect(walk()).to.be.rejectedWith('enough');
      expect(taken).to.deep.equal(['new-0']);
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
      const user = target.user('locale-user');
      await target.seed(user, [{ targetId: 'l1', at: NOW }]);
      const [english] = (await clientOf(user).historyPage()).data;
      const [german] = (await clientOf(user, { locale: 'de' }).historyPage()).data;
      expect(english?.description).to.be.a('string').and.not.equal(german?.description);
      expect(german?.description).to.include('Cid');
    });
  });

  describe('read marks, last-read and delete-all', () => {
    let users = 0;
    /** A user of the test's own with two unread records (r1, then the newer r2). */
    const twoRecords = async () => {
      const user = target.user(`marks-user-${(users += 1)}`);
      await target.seed(user, [
        { targetId: 'r1', at: NOW - 2 * MIN },
        { targetId: 'r2', at: NOW - MIN },
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
      const other = target.user('marks-other');
      await target.seed(other, [{ targetId: 'theirs', at: NOW }]);
      await expect(client.read('comment', 'theirs'))
        .to.be.rejectedWith(TrayApiError)
        .and.eventually.include({ status: 404, code: 404000 });
      const [theirs] = (await clientOf(other).historyPage()).data;
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
      const refused = clientOf(target.user('refused-user')).read('post', '');
      await expect(refused)
        .to.be.rejectedWith(TrayApiError, /targetId/)
        .and.eventually.include({
          status: 400,
          code: 400001,
        });
    });
  });

  describe('a 401', () => {
    it('for a token the service does not accept: asks getToken once more and sends the call again', async () => {
      const user = target.user('refused-token');
      const tokens = ['not-a-jwt', await target.token(user)];
      let asked = 0;
      const client = createTrayClient({ baseUrl: target.baseUrl, getToken: () => tokens[asked++]! });
      expect((await client.counts()).totalUnreadCount).to.equal(0);
      expect(asked).to.equal(2);
    });

    it('for a globally banned user: a TrayApiError with the ban’s own code, thrown without asking getToken again', async () => {
      const user = target.user('banned-user');
      await target.ban(user);
      let asked = 0;
      const client = createTrayClient({
        baseUrl: target.baseUrl,
        getToken: () => (asked++, target.token(user)),
      });
      await expect(client.counts())
        .to.be.rejectedWith(TrayApiError, 'user is globally banned')
        .and.eventually.include({ status: 401, code: unauthorizedCodes.banned });
      expect(unauthorizedCodes.banned).to.equal(401001);
      expect(asked).to.equal(1);
    });
  });
});

// What the tray service never answers but a proxy's cache or a faulty server can, from a real
// HTTP server the test scripts.
describe('the client’s history() against a scripted server', () => {
  const servers = useScriptedServers();
  const record = (targetId: string, lastUpdate: number) => ({
    v_tarid_uid: `comment_${targetId}_u`,
    lastUpdate,
  });

  it('throws a TrayApiError (code 0) when a nextPage does not go below the page asked for, instead of looping', async () => {
    const asked: string[] = [];
    const baseUrl = await servers.serve((req, res) => {
      const startAfter = new URL(req.url ?? '/', 'http://scripted').searchParams.get('startAfter');
      asked.push(startAfter ?? '');
      // The first page, then the same page again for ever, as a cache keyed without the query would.
      const page = { totalPages: 2, nextPage: 5_000, data: [record('a', 5_000)] };
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(page));
    });
    const client = createTrayClient({ baseUrl, getToken: () => 'a-token' });
    const yielded: string[] = [];
    const walk = async () => {
      for await (const one of client.history()) yielded.push(one.v_tarid_uid);
    };
    await expect(walk())
      .to.be.rejectedWith(TrayApiError, /nextPage 5000, which does not go below/)
      .and.eventually.include({ status: 200, code: 0 });
    expect(asked).to.deep.equal(['', '5000']);
    // The repeated page's record is not handed out a second time.
    expect(yielded).to.have.lengthOf(1);
  });
  it('throws when a page answers nextPage 1, which asks for the first page again, instead of looping', async () => {
    const asked: string[] = [];
    const baseUrl = await servers.serve((req, res) => {
      const startAfter = new URL(req.url ?? '/', 'http://scripted').searchParams.get('startAfter');
      asked.push(startAfter ?? '');
      // Every page points at 1, the service's first page: top, 1, top, 1... for ever.
      const page = { totalPages: 2, nextPage: 1, data: [record(startAfter ?? 'top', 5_000)] };
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(page));
    });
    const client = createTrayClient({ baseUrl, getToken: () => 'a-token' });
    const yielded: string[] = [];
    const walk = async () => {
      for await (const one of client.history({ startAfter: 9_000 })) yielded.push(one.v_tarid_uid);
    };
    await expect(walk())
      .to.be.rejectedWith(TrayApiError, /nextPage 1, which does not go below/)
      .and.eventually.include({ status: 200, code: 0 });
    expect(asked).to.deep.equal(['9000']);
    expect(yielded).to.have.lengthOf(0);
  });
});

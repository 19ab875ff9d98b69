import { encodeRecordKey } from '../../../tray-service/domain/record-key.ts';
import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import type { BlockEntry, TrayStorage } from '../../../tray-service/storage/port.ts';
import { bearer, useTrayApi } from '../../tray-service/api/support/api-harness.ts';
import { readAll } from '../../tray-service/worker/worker-harness.ts';
import { seedRecords } from '../../support/seed-tray.ts';
import { reportFigures, tally } from '../support/report-figures.ts';

const userA = 'user-a';
const userB = 'user-b';
const network = 'net1';

/** Every entry of a user's block list, through its pages. */
async function blockEntries(storage: TrayStorage, userId: string): Promise<BlockEntry[]> {
  const all: BlockEntry[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await storage.blockList.page(`${network}_${userId}`, after, 100);
    all.push(...page.results);
    if (!page.paginationToken) return all;
    after = page.paginationToken.blocked_userId;
  }
}

/** Everything of A's and B's the port can read: "nothing changed" compares two of these. */
async function snapshot(storage: TrayStorage): Promise<Record<string, unknown>> {
  const result: Record<string, unknown> = {};
  for (const user of [userA, userB]) {
    result[user] = {
      records: await readAll(storage, user),
      blocks: await blockEntries(storage, user),
      lastRead: await storage.lastRead.latest(user),
      clears: await storage.clears.latest(user),
    };
  }
  return result;
}

let round = 0;
/**
 * A's and B's trays share a verb+target (the tempting case) and each has its own records. Each
 * round starts from empty trays and block lists, and writes its actions anew (new action ids, a
 * later time), as new activity after a delete-all would.
 */
async function seed(storage: TrayStorage) {
  round += 1;
  const at = Date.now() - 60_000 + round;
  for (const user of [userA, userB]) {
    await storage.records.deleteAll(user);
    for (const entry of await blockEntries(storage, user)) {
      await storage.blockList.unblock(entry.netid_uid, entry.blocked_userId);
    }
  }
  const action = (n: number) => `seed-${round}-${n}`;
  await seedRecords(storage, [
    { userId: userA, verb: 'comment', targetId: 'shared-target', lastUpdate: at, lastActionId: action(1) },
    { userId: userA, verb: 'post', targetId: 'a-only', lastUpdate: at - 1, lastActionId: action(2) },
    { userId: userB, verb: 'comment', targetId: 'shared-target', lastUpdate: at, lastActionId: action(3) },
    ...Array.from({ length: 4 }, (_, n) => ({
      userId: userB,
      verb: 'reaction' as const,
      targetId: `b-only-${n}`,
      lastUpdate: at - 2 - n,
      lastActionId: action(4 + n),
    })),
  ]);
  const blocks = [
    [userA, 'x1'],
    [userA, 'x2'],
    [userB, 'y1'],
  ] as const;
  for (const [owner, blocked] of blocks) await storage.blockList.block(`${network}_${owner}`, blocked);
}

describe('tray API: NoSQL operator injection and cross-user isolation', function () {
  this.timeout(60_000);
  const api = useTrayApi();
  let app: Express;
  let asA: string;
  const statuses: number[] = [];
  before(async () => {
    app = api.app();
    asA = await bearer(userA);
  });
  after(() => reportFigures('api injection', { requests: statuses.length, statuses: tally(statuses) }));

  describe('operators in query parameters', () => {
    before(() => seed(api.storage));
    // With the 'simple' query parser `a[$gt]=0` is a key named "a[$gt]", never an object; such a
    // key is not a parameter of the endpoint, and every endpoint refuses what it does not take
    // (400 naming it): nothing is read or changed for it.
    const cases: { path: string; names?: string }[] = [
      { path: '/notifications/v3/history?startAfter[$gt]=0', names: 'startAfter[$gt]' },
      { path: '/notifications/v3/history?startAfter[$ne]=1', names: 'startAfter[$ne]' },
      { path: '/notifications/v3/history?startAfter={"$gt":0}' },
      { path: '/notifications/v3/history?startAfter=1&startAfter=2' },
      { path: '/notifications/v3/history?locale=en&locale=fr' },
      { path: '/notifications/v3/history?locale[$ne]=x', names: 'locale[$ne]' },
      { path: '/notifications/v2/history?page[$gt]=0', names: 'page[$gt]' },
      { path: '/notifications/v2/history?page={"$gt":0}' },
      { path: '/notifications/v2/history?page=1&page=2' },
      { path: '/notifications/v3?userId=user-b', names: 'userId' },
      { path: '/notifications/v3/history?userId[$ne]=x', names: 'userId[$ne]' },
      { path: '/block/members?checkList[$ne]=x' },
      { path: '/block/members?checkList[]=x1' },
    ];
    for (const { path, names } of cases) {
      it(`GET ${path} answers 400${names ? ` naming ${names}` : ''} and changes nothing`, async () => {
        const before = await snapshot(api.storage);
        const res = await request(app).get(path).set('authorization', asA);
        statuses.push(res.status);
        expect(res.status).to.equal(400);
        expect(res.body).to.have.keys(['status', 'code', 'message']);
        if (names) expect(res.body.message).to.include(`unknown parameter ${names}`);
        expect(await snapshot(api.storage)).to.deep.equal(before);
      });
    }
    it('GET /block/members?checkList={"$ne":null} treats it as one literal user id', async () => {
      const res = await request(app).get('/block/members?checkList={"$ne":null}').set('authorization', asA);
      statuses.push(res.status);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ '{"$ne":null}': false });
    });
  });

  describe('operators in body fields', () => {
    before(() => seed(api.storage));
    const cases: { method: 'post' | 'delete'; path: string; body: unknown }[] = [
      { method: 'post', path: '/notifications/v2/read', body: { verb: 'comment', targetId: { $ne: null } } },
      {
        method: 'post',
        path: '/notifications/v2/read',
        body: { verb: { $ne: null }, targetId: 'shared-target' },
      },
      {
        method: 'post',
        path: '/notifications/v2/read',
        body: { verb: 'comment', targetId: { $regex: '.*' } },
      },
      {
        method: 'post',
        path: '/notifications/v2/read',
        body: { verb: 'comment', targetId: ['shared-target'] },
      },
      {
        method: 'post',
        path: '/notifications/v2/read',
        body: { verb: { $in: ['comment'] }, targetId: { $gt: '' } },
      },
      { method: 'post', path: '/notifications/v2/read', body: { $where: 'true' } },
      {
        method: 'post',
        path: '/notifications/v2/read',
        body: [{ verb: 'comment', targetId: 'shared-target' }],
      },
      { method: 'post', path: '/block/members', body: { blockUserId: { $gt: '' } } },
      { method: 'post', path: '/block/members', body: { blockUserId: { $ne: null } } },
      { method: 'post', path: '/block/members', body: { blockUserId: ['x3'] } },
      { method: 'post', path: '/block/members', body: { blockUserId: true } },
      { method: 'delete', path: '/block/members', body: { blockUserId: { $ne: null } } },
      { method: 'delete', path: '/block/members', body: { blockUserId: { $gt: '' } } },
      { method: 'delete', path: '/block/members', body: { blockUserId: { $regex: '.' } } },
      {
        method: 'post',
        path: '/block',
        body: { paginationToken: { netid_uid: { $ne: null }, blocked_userId: '' } },
      },
      {
        method: 'post',
        path: '/block',
        body: { paginationToken: { netid_uid: `${network}_${userA}`, blocked_userId: { $gt: '' } } },
      },
      { method: 'post', path: '/block', body: { paginationToken: { $gt: '' } } },
      { method: 'post', path: '/block', body: { paginationToken: 'x1' } },
    ];
    for (const { method, path, body } of cases) {
      it(`${method.toUpperCase()} ${path} ${JSON.stringify(body)} answers 400 and changes nothing`, async () => {
        const before = await snapshot(api.storage);
        const agent = request(app);
        const res = await (method === 'post' ? agent.post(path) : agent.delete(path))
          .set('authorization', asA)
          .send(body as object);
        statuses.push(res.status);
        expect(res.status).to.equal(400);
        expect(res.body).to.have.keys(['status', 'code', 'message']);
        expect(await snapshot(api.storage)).to.deep.equal(before);
      });
    }
  });

  describe('user A against user B', () => {
    beforeEach(() => seed(api.storage));
    const records = (storage: TrayStorage, userId: string) => readAll(storage, userId);

    it("A's history (v3 and v2) and unread count hold only A's records", async () => {
      const v3 = await request(app).get('/notifications/v3/history').set('authorization', asA).expect(200);
      const v2 = await request(app).get('/notifications/v2/history').set('authorization', asA).expect(200);
      // A's two seeded records, named here rather than read back through the storage's own reads.
      const aKeys = [
        encodeRecordKey({ verb: 'comment', targetId: 'shared-target', userId: userA }),
        encodeRecordKey({ verb: 'post', targetId: 'a-only', userId: userA }),
      ].sort();
      for (const page of [v3.body, v2.body] as { data: { v_tarid_uid: string }[] }[]) {
        expect(page.data.map((r) => r.v_tarid_uid).sort()).to.deep.equal(aKeys);
      }
      const count = await request(app).get('/notifications/v3').set('authorization', asA).expect(200);
      expect(count.body).to.deep.equal({ data: { totalUnreadCount: 2, totalUnseenCount: 2 } });
    });

    it("A cannot mark B's record read: 404 for B's target, and the shared target marks only A's", async () => {
      const bBefore = await records(api.storage, userB);
      await request(app)
        .post('/notifications/v2/read')
        .set('authorization', asA)
        .send({ verb: 'reaction', targetId: 'b-only-0' })
        .expect(404);
      // A field the call does not take, another user's id included, is refused (400)...
      await request(app)
        .post('/notifications/v2/read')
        .set('authorization', asA)
        .send({ verb: 'comment', targetId: 'shared-target', userId: userB })
        .expect(400);
      expect(await records(api.storage, userB)).to.deep.equal(bBefore);
      // ...and the call marks only the caller's record of a target both have.
      await request(app)
        .post('/notifications/v2/read')
        .set('authorization', asA)
        .send({ verb: 'comment', targetId: 'shared-target' })
        .expect(200);
      expect(await records(api.storage, userB)).to.deep.equal(bBefore);
      const aShared = (await records(api.storage, userA)).find((r) => r.targetId === 'shared-target');
      expect(aShared?.hasRead).to.equal(true);
    });

    it("A's mark-all-as-read and delete-all leave B's records as they were, and refuse B's id sent to them", async () => {
      const bBefore = await records(api.storage, userB);
      const aBefore = await records(api.storage, userA);
      // They take no input: one naming B is refused (400), changing nothing of A's either.
      await request(app)
        .get('/notifications/v3/mark-all-as-read?userId=user-b')
        .set('authorization', asA)
        .expect(400);
      await request(app)
        .delete('/notifications/v3/delete-all')
        .set('authorization', asA)
        .send({ userId: userB })
        .expect(400);
      expect(await records(api.storage, userA)).to.deep.equal(aBefore);
      await request(app).get('/notifications/v3/mark-all-as-read').set('authorization', asA).expect(200);
      await request(app).delete('/notifications/v3/delete-all').set('authorization', asA).expect(200);
      expect(await records(api.storage, userB)).to.deep.equal(bBefore);
      expect(await records(api.storage, userA)).to.deep.equal([]);
    });

    it("A cannot read, page into or change B's block list", async () => {
      const bBefore = await blockEntries(api.storage, userB);
      const check = await request(app)
        .get('/block/members?checkList=y1&checkList=x1')
        .set('authorization', asA)
        .expect(200);
      expect(check.body).to.deep.equal({ y1: false, x1: true });
      const page = await request(app).post('/block').set('authorization', asA).send({}).expect(200);
      expect(
        (page.body as { results: { blocked_userId: string }[] }).results.map((r) => r.blocked_userId),
      ).to.deep.equal(['x1', 'x2']);
      await request(app)
        .post('/block')
        .set('authorization', asA)
        .send({ paginationToken: { netid_uid: `${network}_${userB}`, blocked_userId: '' } })
        .expect(400);
      await request(app)
        .delete('/block/members')
        .set('authorization', asA)
        .send({ blockUserId: 'y1' })
        .expect(200);
      await request(app)
        .post('/block/members')
        .set('authorization', asA)
        .send({ blockUserId: 'y2', userId: userB })
        .expect(400);
      await request(app)
        .post('/block/members')
        .set('authorization', asA)
        .send({ blockUserId: 'y2' })
        .expect(200);
      expect(await blockEntries(api.storage, userB)).to.deep.equal(bBefore);
    });

    it(`a token for the user id "${userA}\\u0000" is refused (401): a control character names nobody`, async () => {
      const auth = await bearer(`${userA}\u0000`);
      await request(app).get('/notifications/v3/history').set('authorization', auth).expect(401);
      await request(app).get('/block/members?checkList=x1').set('authorization', auth).expect(401);
    });

    for (const sub of ['.*', '{"$ne":null}', `${userA} `, 'USER-A', '__proto__']) {
      it(`a token for the user id ${JSON.stringify(sub)} sees nothing of A's`, async () => {
        const auth = await bearer(sub);
        const history = await request(app)
          .get('/notifications/v3/history')
          .set('authorization', auth)
          .expect(200);
        expect(history.body.data).to.deep.equal([]);
        const check = await request(app)
          .get('/block/members?checkList=x1')
          .set('authorization', auth)
          .expect(200);
        expect(check.body).to.deep.equal({ x1: false });
      });
    }
  });
});

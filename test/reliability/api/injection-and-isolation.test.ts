import { expect } from 'chai';
import type { Express } from 'express';
import type { Db } from 'mongodb';
import request from 'supertest';
import { TRAY_RECORD_CLAIMS, TRAY_RECORDS, type TrayRecordDoc } from '../../../shared/tray/tray-record.ts';
import { BLOCK_LIST } from '../../../tray-service/storage/mongodb/block-list-repository.ts';
import { bearer, useTrayApi } from '../../tray-service/api/support/api-harness.ts';
import { aTrayRecord, insertRecords } from '../../support/tray-record-builder.ts';
import { reportFigures, tally } from '../support/report-figures.ts';

const userA = 'user-a';
const userB = 'user-b';
const network = 'net1';

/** Every document of every collection, sorted: "nothing changed" compares two of these. */
async function snapshot(db: Db): Promise<Record<string, unknown[]>> {
  const names = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).sort();
  const result: Record<string, unknown[]> = {};
  for (const name of names) result[name] = await db.collection(name).find({}).sort({ _id: 1 }).toArray();
  return result;
}

/** A's and B's trays share a verb+target (the tempting case) and each has its own records. */
async function seed(db: Db) {
  const at = Date.now() - 60_000;
  // Records go back to version 1 here, so their claims must go too (as delete-all does).
  await db.collection(TRAY_RECORDS).deleteMany({});
  await db.collection(TRAY_RECORD_CLAIMS).deleteMany({});
  await db.collection(BLOCK_LIST).deleteMany({});
  await insertRecords(db, [
    aTrayRecord({ userId: userA, verb: 'comment', targetId: 'shared-target', lastUpdate: at }),
    aTrayRecord({ userId: userA, verb: 'post', targetId: 'a-only', lastUpdate: at - 1 }),
    aTrayRecord({ userId: userB, verb: 'comment', targetId: 'shared-target', lastUpdate: at }),
    ...Array.from({ length: 4 }, (_, n) =>
      aTrayRecord({ userId: userB, verb: 'reaction', targetId: `b-only-${n}`, lastUpdate: at - 2 - n }),
    ),
  ]);
  const blocks = [
    [userA, 'x1'],
    [userA, 'x2'],
    [userB, 'y1'],
  ];
  await db.collection(BLOCK_LIST).insertMany(
    blocks.map(([owner, blocked]) => ({
      _id: JSON.stringify([`${network}_${owner}`, blocked]),
      netid_uid: `${network}_${owner}`,
      blocked_userId: blocked,
      createdAt: new Date(at),
    })) as never[],
  );
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
    before(() => seed(api.db));
    // With the 'simple' query parser `a[$gt]=0` is a key named "a[$gt]", never an object; such a
    // key is not a parameter of the endpoint and is ignored: the answer must equal the one without it.
    const cases: { path: string; without: string; expect: 400 | 'ignored' }[] = [
      {
        path: '/notifications/v3/history?startAfter[$gt]=0',
        without: '/notifications/v3/history',
        expect: 'ignored',
      },
      {
        path: '/notifications/v3/history?startAfter[$ne]=1',
        without: '/notifications/v3/history',
        expect: 'ignored',
      },
      { path: '/notifications/v3/history?startAfter={"$gt":0}', without: '', expect: 400 },
      { path: '/notifications/v3/history?startAfter=1&startAfter=2', without: '', expect: 400 },
      { path: '/notifications/v3/history?locale=en&locale=fr', without: '', expect: 400 },
      {
        path: '/notifications/v3/history?locale[$ne]=x',
        without: '/notifications/v3/history',
        expect: 'ignored',
      },
      {
        path: '/notifications/v2/history?page[$gt]=0',
        without: '/notifications/v2/history',
        expect: 'ignored',
      },
      { path: '/notifications/v2/history?page={"$gt":0}', without: '', expect: 400 },
      { path: '/notifications/v2/history?page=1&page=2', without: '', expect: 400 },
      { path: '/notifications/v3?userId=user-b', without: '/notifications/v3', expect: 'ignored' },
      {
        path: '/notifications/v3/history?userId[$ne]=x',
        without: '/notifications/v3/history',
        expect: 'ignored',
      },
      { path: '/block/members?checkList[$ne]=x', without: '', expect: 400 },
      { path: '/block/members?checkList[]=x1', without: '', expect: 400 },
    ];
    for (const { path, without, expect: expected } of cases) {
      it(`GET ${path} ${expected === 400 ? 'answers 400' : 'ignores the parameter'} and changes nothing`, async () => {
        const before = await snapshot(api.db);
        const res = await request(app).get(path).set('authorization', asA);
        statuses.push(res.status);
        if (expected === 400) {
          expect(res.status).to.equal(400);
          expect(res.body).to.have.keys(['status', 'code', 'message']);
        } else {
          expect(res.status).to.equal(200);
          const plain = await request(app).get(without).set('authorization', asA);
          expect(res.body).to.deep.equal(plain.body);
        }
        expect(await snapshot(api.db)).to.deep.equal(before);
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
    before(() => seed(api.db));
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
        const before = await snapshot(api.db);
        const agent = request(app);
        const res = await (method === 'post' ? agent.post(path) : agent.delete(path))
          .set('authorization', asA)
          .send(body as object);
        statuses.push(res.status);
        expect(res.status).to.equal(400);
        expect(res.body).to.have.keys(['status', 'code', 'message']);
        expect(await snapshot(api.db)).to.deep.equal(before);
      });
    }
  });

  describe('user A against user B', () => {
    beforeEach(() => seed(api.db));
    const records = (db: Db, userId: string) =>
      db.collection<TrayRecordDoc>(TRAY_RECORDS).find({ userId }).sort({ _id: 1 }).toArray();
    const blockEntries = (db: Db, userId: string) =>
      db
        .collection(BLOCK_LIST)
        .find({ netid_uid: `${network}_${userId}` })
        .sort({ _id: 1 })
        .toArray();

    it("A's history (v3 and v2) and unread count hold only A's records", async () => {
      const v3 = await request(app).get('/notifications/v3/history').set('authorization', asA).expect(200);
      const v2 = await request(app).get('/notifications/v2/history').set('authorization', asA).expect(200);
      for (const page of [v3.body, v2.body] as { data: { v_tarid_uid: string }[] }[]) {
        expect(page.data.map((r) => r.v_tarid_uid).sort()).to.deep.equal(
          (await records(api.db, userA)).map((r) => r._id).sort(),
        );
      }
      const count = await request(app).get('/notifications/v3').set('authorization', asA).expect(200);
      expect(count.body).to.deep.equal({ data: { totalUnreadCount: 2 } });
    });

    it("A cannot mark B's record read: 404 for B's target, and the shared target marks only A's", async () => {
      const bBefore = await records(api.db, userB);
      await request(app)
        .post('/notifications/v2/read')
        .set('authorization', asA)
        .send({ verb: 'reaction', targetId: 'b-only-0' })
        .expect(404);
      await request(app)
        .post('/notifications/v2/read')
        .set('authorization', asA)
        .send({ verb: 'comment', targetId: 'shared-target', userId: userB })
        .expect(200);
      expect(await records(api.db, userB)).to.deep.equal(bBefore);
      const aShared = (await records(api.db, userA)).find((r) => r.targetId === 'shared-target');
      expect(aShared?.hasRead).to.equal(true);
    });

    it("A's mark-all-as-read and delete-all leave B's records as they were", async () => {
      const bBefore = await records(api.db, userB);
      await request(app)
        .get('/notifications/v3/mark-all-as-read?userId=user-b')
        .set('authorization', asA)
        .expect(200);
      await request(app)
        .delete('/notifications/v3/delete-all')
        .set('authorization', asA)
        .send({ userId: userB });
      expect(await records(api.db, userB)).to.deep.equal(bBefore);
      expect(await records(api.db, userA)).to.deep.equal([]);
    });

    it("A cannot read, page into or change B's block list", async () => {
      const bBefore = await blockEntries(api.db, userB);
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
        .expect(200);
      expect(await blockEntries(api.db, userB)).to.deep.equal(bBefore);
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

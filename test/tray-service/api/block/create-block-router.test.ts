import { expect } from 'chai';
import request from 'supertest';
import { bearer, useTrayApi } from '../support/api-harness.ts';
import { expectMatchesOpenApi } from '../support/openapi-validator.ts';
import { MAX_BLOCKED_USERS } from '../../../../tray-service/domain/block-list-limit.ts';

const SUNSET = 'Wed, 28 Feb 2024 00:00:00 GMT';

describe('block list (docs/contract.md#block-list-legacy-beta-deprecated)', () => {
  const api = useTrayApi();
  const app = () => api.app();

  // Versions before POST refused ids no token can name stored them (`alice\u200B`, spaces only):
  // their owners must still be able to remove them and page past them.
  describe('an entry stored before such ids were refused', () => {
    const owner = 'owner-legacy';
    // In id order: spaces only first, the invisible one last of the first page of 20.
    const legacy = [
      '   ',
      ...Array.from({ length: 18 }, (_, n) => `a-${String(n).padStart(2, '0')}`),
      'zz\u200B',
      '~~',
    ];

    it('pages past it, and DELETE removes it', async () => {
      for (const id of legacy) await api.storage.blockList.block(`net1_${owner}`, id);
      const auth = await bearer(owner);
      const first = await request(app()).post('/block').set('Authorization', auth).send({}).expect(200);
      expect(first.body.results).to.have.lengthOf(20);
      // The last entry of the first page is the next call's token, here the invisible one.
      expect(first.body.paginationToken).to.include({ blocked_userId: 'zz\u200B' });
      const second = await request(app())
        .post('/block')
        .set('Authorization', auth)
        .send({ paginationToken: first.body.paginationToken })
        .expect(200);
      expect(
        [...first.body.results, ...second.body.results].map(
          (entry: { blocked_userId: string }) => entry.blocked_userId,
        ),
      ).to.deep.equal([...legacy].sort());
      for (const id of ['   ', 'zz\u200B'])
        expect(
          (
            await request(app())
              .delete('/block/members')
              .set('Authorization', auth)
              .send({ blockUserId: id })
              .expect(200)
          ).body,
        ).to.deep.equal({ status: 'success' });
      const left = await request(app()).post('/block').set('Authorization', auth).send({}).expect(200);
      expect(left.body.results).to.have.lengthOf(19);
    });
  });

  describe('POST /block/members', () => {
    it('blocks a user, idempotently, with Deprecation and Sunset headers', async () => {
      const auth = await bearer('owner-1');
      for (let i = 0; i < 2; i++) {
        const res = await request(app())
          .post('/block/members')
          .set('Authorization', auth)
          .send({ blockUserId: 'u2' })
          .expect(200);
        expect(res.body).to.deep.equal({ status: 'success' });
        expect(res.headers.sunset).to.equal(SUNSET);
        expect(res.headers.deprecation).to.equal('@1709078400');
      }
      const list = await request(app()).post('/block').set('Authorization', auth).send({}).expect(200);
      expect(list.body).to.deep.equal({
        results: [{ blocked_userId: 'u2', netid_uid: 'net1_owner-1' }],
        paginationToken: null,
      });
    });

    it('accepts a numeric user id as the same id in string form', async () => {
      const auth = await bearer('owner-2');
      await request(app())
        .post('/block/members')
        .set('Authorization', auth)
        .send({ blockUserId: 77 })
        .expect(200);
      const check = await request(app())
        .get('/block/members?checkList=77')
        .set('Authorization', auth)
        .expect(200);
      expect(check.body).to.deep.equal({ 77: true });
    });

    it('answers blocking yourself with 400 naming blockUserId', async () => {
      const res = await request(app())
        .post('/block/members')
        .set('Authorization', await bearer('owner-3'))
        .send({ blockUserId: 'owner-3' })
        .expect(400);
      expect(res.body.message).to.match(/^blockUserId: /);
      expect(res.headers.sunset).to.equal(SUNSET);
    });

    for (const [label, body] of [
      ['an object', { blockUserId: { $gt: '' } }],
      ['no blockUserId', {}],
      ['an empty string', { blockUserId: '' }],
      ['two users in one call (one user per call)', { blockUserId: ['u-1', 'u-2'] }],
      ['a string holding U+0000 (no stored id can)', { blockUserId: 'x\u0000' }],
      // No token can name these users: `alice\u200B` would read as alice and block nobody.
      ['an id of spaces only', { blockUserId: '   ' }],
      ['an id holding an invisible character', { blockUserId: 'alice\u200B' }],
      ['an id holding a bidi override', { blockUserId: '\u202Eecila' }],
    ] as const) {
      it(`answers ${label} with 400 naming blockUserId`, async () => {
        const res = await request(app())
          .post('/block/members')
          .set('Authorization', await bearer('owner-3'))
          .send(body)
          .expect(400);
        expect(res.body).to.include({ status: 'error', code: 400001 });
        expect(res.body.message).to.match(/^blockUserId: /);
      });
    }

    it('refuses a new user past 10,000 blocked with 400 (code 400005), but not one already blocked', async function () {
      this.timeout(120_000);
      const owner = 'owner-full';
      const blocked = Array.from({ length: MAX_BLOCKED_USERS }, (_, n) => `u-${n}`);
      // Stored as earlier blocks left them, 100 at a time (no limit asked of the port).
      for (let start = 0; start < blocked.length; start += 100)
        await Promise.all(
          blocked.slice(start, start + 100).map((id) => api.storage.blockList.block(`net1_${owner}`, id)),
        );
      const auth = await bearer(owner);
      const block = (blockUserId: string) =>
        request(app()).post('/block/members').set('Authorization', auth).send({ blockUserId });
      const refused = await block('u-new').expect(400);
      expect(refused.body).to.include({ status: 'error', code: 400005 });
      expect(refused.body.message).to.match(/at most 10000 users/);
      expect(refused.headers.sunset).to.equal(SUNSET);
      expectMatchesOpenApi(refused, 'POST', '/block/members');
      const check = () =>
        request(app())
          .get('/block/members')
          .query({ checkList: ['u-new', 'u-7'] })
          .set('Authorization', auth)
          .expect(200);
      expect((await check()).body).to.deep.equal({ 'u-new': false, 'u-7': true });
      // Blocking again someone blocked changes nothing and succeeds; after an unblock there is room.
      expect((await block('u-7').expect(200)).body).to.deep.equal({ status: 'success' });
      await request(app())
        .delete('/block/members')
        .set('Authorization', auth)
        .send({ blockUserId: 'u-9' })
        .expect(200);
      await block('u-new').expect(200);
      expect((await check()).body).to.deep.equal({ 'u-new': true, 'u-7': true });
    });

    // One user per call: a call that blocked only the first of several would do less than asked.
    it('answers a field it does not take with 400 naming it, blocking nobody', async () => {
      const auth = await bearer('owner-extra');
      const res = await request(app())
        .post('/block/members')
        .set('Authorization', auth)
        .send({ blockUserId: 'a', blockUserIds: ['b', 'c'] })
        .expect(400);
      expect(res.body).to.deep.equal({
        status: 'error',
        code: 400001,
        message: 'body: unknown field blockUserIds',
      });
      const list = await request(app()).post('/block').set('Authorization', auth).expect(200);
      expect(list.body.results).to.deep.equal([]);
    });

    it('answers a query parameter with 400 naming it, on every call that takes a body', async () => {
      const auth = await bearer('owner-query');
      for (const [method, path] of [
        ['post', '/block/members?blockUserId=b'],
        ['delete', '/block/members?all=true'],
        ['post', '/block?paginationToken=x'],
      ] as const) {
        const res = await request(app())[method](path).set('Authorization', auth).send({ blockUserId: 'a' });
        expect(res.status, `${method} ${path}`).to.equal(400);
        expect(res.body.message, `${method} ${path}`).to.match(/^query: unknown parameter /);
      }
      const list = await request(app()).post('/block').set('Authorization', auth).expect(200);
      expect(list.body.results).to.deep.equal([]);
    });

    // docs/tray-rules.md#deleted-users: a token outlives the deletion until it expires.
    it("answers a deleted user's block with 410 (code 410001) and the deprecation headers, keeping no list", async () => {
      await api.storage.writes.applyProfiles(
        [{ userId: 'owner-gone', displayName: 'Deleted user', deleted: true, at: Date.now() - 60_000 }],
        { now: Date.now(), retentionDays: 90 },
      );
      const auth = await bearer('owner-gone');
      const res = await request(app())
        .post('/block/members')
        .set('Authorization', auth)
        .send({ blockUserId: 'u2' })
        .expect(410);
      expect(res.body).to.include({ status: 'error', code: 410001 });
      expect(res.headers.sunset).to.equal(SUNSET);
      expectMatchesOpenApi(res, 'POST', '/block/members');
      const list = await request(app()).post('/block').set('Authorization', auth).send({}).expect(200);
      expect(list.body).to.deep.equal({ results: [], paginationToken: null });
      // Blocking themselves too: a deleted user's call is the deletion's 410, not a 400 as though
      // the account went on.
      const self = await request(app())
        .post('/block/members')
        .set('Authorization', auth)
        .send({ blockUserId: 'owner-gone' })
        .expect(410);
      expect(self.body).to.include({ status: 'error', code: 410001 });
    });

    it('answers 401 without a token, still with the deprecation headers', async () => {
      const res = await request(app()).post('/block/members').send({ blockUserId: 'x' }).expect(401);
      expect(res.headers.sunset).to.equal(SUNSET);
    });
  });

  describe('DELETE /block/members', () => {
    it('unblocks, and unblocking again still succeeds', async () => {
      const auth = await bearer('owner-4');
      await request(app())
        .post('/block/members')
        .set('Authorization', auth)
        .send({ blockUserId: 'u9' })
        .expect(200);
      for (let i = 0; i < 2; i++) {
        const res = await request(app())
          .delete('/block/members')
          .set('Authorization', auth)
          .send({ blockUserId: 'u9' })
          .expect(200);
        expect(res.body).to.deep.equal({ status: 'success' });
      }
      const check = await request(app())
        .get('/block/members?checkList=u9')
        .set('Authorization', auth)
        .expect(200);
      expect(check.body).to.deep.equal({ u9: false });
    });

    it('answers a field it does not take with 400 naming it, unblocking nobody', async () => {
      const auth = await bearer('owner-extra-2');
      await request(app()).post('/block/members').set('Authorization', auth).send({ blockUserId: 'a' });
      const res = await request(app())
        .delete('/block/members')
        .set('Authorization', auth)
        .send({ blockUserId: 'a', all: true })
        .expect(400);
      expect(res.body.message).to.equal('body: unknown field all');
      const check = await request(app()).get('/block/members?checkList=a').set('Authorization', auth);
      expect(check.body).to.deep.equal({ a: true });
    });

    it('answers a blockUserId holding U+0000 with 400 naming blockUserId', async () => {
      const res = await request(app())
        .delete('/block/members')
        .set('Authorization', await bearer('owner-4'))
        .send({ blockUserId: 'x\u0000' })
        .expect(400);
      expect(res.body).to.deep.equal({
        status: 'error',
        code: 400001,
        message: 'blockUserId: expected no U+0000 character and no lone surrogate',
      });
    });

    it('answers a blockUserId holding a lone surrogate with 400, blocking nobody (storage would keep U+FFFD: another user)', async () => {
      const auth = await bearer('owner-5');
      const res = await request(app())
        .post('/block/members')
        .set('Authorization', auth)
        .send({ blockUserId: 'x\uD800' })
        .expect(400);
      expect(res.body).to.deep.equal({
        status: 'error',
        code: 400001,
        message: 'blockUserId: expected no U+0000 character and no lone surrogate',
      });
      const check = await request(app())
        .get(`/block/members?checkList=${encodeURIComponent('x\uFFFD')}`)
        .set('Authorization', auth)
        .expect(200);
      expect(check.body).to.deep.equal({ 'x\uFFFD': false });
    });
  });

  describe('POST /block with 45 entries', () => {
    const owner = 'owner-45';
    const blocked = Array.from({ length: 45 }, (_, i) => `b${String(i).padStart(2, '0')}`);
    before(async () => {
      const auth = await bearer(owner);
      for (const id of blocked) {
        await request(app())
          .post('/block/members')
          .set('Authorization', auth)
          .send({ blockUserId: id })
          .expect(200);
      }
    });

    it('pages 20, 20, 5 with a token object and null on the last page', async () => {
      const auth = await bearer(owner);
      const seen: string[] = [];
      const sizes: number[] = [];
      let token: unknown = undefined;
      do {
        const res = await request(app())
          .post('/block')
          .set('Authorization', auth)
          .send(token === undefined ? {} : { paginationToken: token })
          .expect(200);
        sizes.push(res.body.results.length);
        for (const entry of res.body.results) {
          expect(entry.netid_uid).to.equal(`net1_${owner}`);
          seen.push(entry.blocked_userId);
        }
        token = res.body.paginationToken;
        if (token !== null) expect(token).to.have.all.keys('netid_uid', 'blocked_userId');
      } while (token !== null);
      expect(sizes).to.deep.equal([20, 20, 5]);
      expect(seen).to.deep.equal(blocked);
    });

    it('accepts a request without a body for the first page', async () => {
      const res = await request(app())
        .post('/block')
        .set('Authorization', await bearer(owner))
        .expect(200);
      expect(res.body.results).to.have.lengthOf(20);
    });

    const invalidToken = { status: 'error', code: 400002, message: 'Query Token is invalid' };
    it("answers another user's token with 400 'Query Token is invalid'", async () => {
      const res = await request(app())
        .post('/block')
        .set('Authorization', await bearer('intruder'))
        .send({ paginationToken: { netid_uid: `net1_${owner}`, blocked_userId: 'b00' } })
        .expect(400);
      expect(res.body).to.deep.equal(invalidToken);
    });

    const malformed: unknown[] = [
      'abc',
      42,
      [],
      {},
      { netid_uid: `net1_${owner}` },
      { blocked_userId: 'b00' },
      { netid_uid: 7, blocked_userId: 'b00' },
      { netid_uid: `net1_${owner}`, blocked_userId: { $gt: '' } },
      { netid_uid: `net1_${owner}`, blocked_userId: 'b0\u0000' },
      { netid_uid: `net1_${owner}\u0000`, blocked_userId: 'b00' },
    ];
    for (const token of malformed) {
      it(`answers the token ${JSON.stringify(token)} with 400 'Query Token is invalid'`, async () => {
        const res = await request(app())
          .post('/block')
          .set('Authorization', await bearer(owner))
          .send({ paginationToken: token })
          .expect(400);
        expect(res.body).to.deep.equal(invalidToken);
      });
    }

    it('answers a field it does not take with 400 naming it', async () => {
      const res = await request(app())
        .post('/block')
        .set('Authorization', await bearer(owner))
        .send({ paginationToken: null, pageSize: 45 })
        .expect(400);
      expect(res.body).to.deep.equal({
        status: 'error',
        code: 400001,
        message: 'body: unknown field pageSize',
      });
    });

    it("answers a token with a member no page hands out with 400 'Query Token is invalid'", async () => {
      const res = await request(app())
        .post('/block')
        .set('Authorization', await bearer(owner))
        .send({ paginationToken: { netid_uid: `net1_${owner}`, blocked_userId: 'b19', skip: 20 } })
        .expect(400);
      expect(res.body).to.deep.equal(invalidToken);
    });

    it('takes a null token as the first page', async () => {
      const res = await request(app())
        .post('/block')
        .set('Authorization', await bearer(owner))
        .send({ paginationToken: null })
        .expect(200);
      expect(res.body.results).to.have.lengthOf(20);
    });
  });

  describe('GET /block/members?checkList', () => {
    const owner = 'owner-check';
    before(async () => {
      const auth = await bearer(owner);
      for (const id of ['c1', 'c3']) {
        await request(app())
          .post('/block/members')
          .set('Authorization', auth)
          .send({ blockUserId: id })
          .expect(200);
      }
    });

    it('maps each id to whether the caller blocked it', async () => {
      const res = await request(app())
        .get('/block/members?checkList=c1&checkList=c2&checkList=c3&checkList=__proto__')
        .set('Authorization', await bearer(owner))
        .expect(200);
      expect(res.body).to.deep.equal({ c1: true, c2: false, c3: true, ['__proto__']: false });
    });

    it('answers for another owner that nothing is blocked', async () => {
      const res = await request(app())
        .get('/block/members?checkList=c1')
        .set('Authorization', await bearer('not-owner'))
        .expect(200);
      expect(res.body).to.deep.equal({ c1: false });
    });

    it('answers 20 ids', async () => {
      const ids = Array.from({ length: 20 }, (_, i) => `c${i}`);
      const res = await request(app())
        .get(`/block/members?${ids.map((id) => `checkList=${id}`).join('&')}`)
        .set('Authorization', await bearer(owner))
        .expect(200);
      expect(Object.keys(res.body)).to.have.lengthOf(20);
    });

    it('answers a parameter it does not take with 400 naming it', async () => {
      const res = await request(app())
        .get('/block/members?checkList=c1&userId=someone-else')
        .set('Authorization', await bearer(owner))
        .expect(400);
      expect(res.body).to.deep.equal({
        status: 'error',
        code: 400001,
        message: 'query: unknown parameter userId',
      });
    });

    it('answers 21 ids with 400 naming checkList', async () => {
      const ids = Array.from({ length: 21 }, (_, i) => `c${i}`);
      const res = await request(app())
        .get(`/block/members?${ids.map((id) => `checkList=${id}`).join('&')}`)
        .set('Authorization', await bearer(owner))
        .expect(400);
      expect(res.body.message).to.match(/^checkList: expected 1 to 20 user ids/);
      expect(res.headers.sunset).to.equal(SUNSET);
    });

    it('answers an empty id, and one over 256 characters, with 400 naming what is wrong', async () => {
      const empty = await request(app())
        .get('/block/members?checkList=c1&checkList=')
        .set('Authorization', await bearer(owner))
        .expect(400);
      expect(empty.body.message).to.equal('checkList: expected non-empty user ids');
      const long = await request(app())
        .get(`/block/members?checkList=c1&checkList=${'x'.repeat(257)}`)
        .set('Authorization', await bearer(owner))
        .expect(400);
      expect(long.body.message).to.equal('checkList: expected user ids of at most 256 characters');
    });

    it('answers an id holding U+0000 with 400 naming checkList', async () => {
      const res = await request(app())
        .get('/block/members?checkList=c1&checkList=a%00b')
        .set('Authorization', await bearer(owner))
        .expect(400);
      expect(res.body).to.deep.equal({
        status: 'error',
        code: 400001,
        message: 'checkList: expected no U+0000 character and no lone surrogate',
      });
    });

    it('answers no checkList with 400 naming checkList', async () => {
      const res = await request(app())
        .get('/block/members')
        .set('Authorization', await bearer(owner))
        .expect(400);
      expect(res.body.message).to.match(/^checkList: /);
    });
  });

  describe('with BLOCK_API=off', () => {
    it('answers every block path with 410 and the deprecation headers', async () => {
      const off = api.app({
        settings: { pageSize: 10, networkId: 'net1', blockApi: false, retentionDays: 90 },
      });
      for (const call of [
        request(off).post('/block/members').send({ blockUserId: 'x' }),
        request(off).post('/block').send({}),
        request(off).get('/block/members?checkList=a'),
        request(off).delete('/block/members').send({ blockUserId: 'x' }),
      ]) {
        const res = await call.expect(410);
        expect(res.body).to.include({ status: 'error', code: 410000 });
        expect(res.headers.sunset).to.equal(SUNSET);
      }
    });
  });

  describe('with a method the path does not allow', () => {
    it('answers 405 with Allow', async () => {
      const res = await request(app()).put('/block').expect(405);
      expect(res.headers.allow).to.equal('POST');
    });
  });
});

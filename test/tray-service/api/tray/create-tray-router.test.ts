import { expect } from 'chai';
import request from 'supertest';
import { bearer, useTrayApi } from '../support/api-harness.ts';
import { expectMatchesOpenApi } from '../support/openapi-validator.ts';
import { seedRecords } from '../../../support/seed-tray.ts';
import { readAll } from '../../worker/worker-harness.ts';

const NOW = Date.UTC(2026, 0, 15, 12);
const MIN = 60_000;

describe('tray endpoints (docs/contract.md#tray)', () => {
  const api = useTrayApi();
  const app = () => api.app({ now: () => NOW });

  describe('GET /notifications/v3', () => {
    const user = 'unread-user';
    before(async () => {
      await seedRecords(api.storage, [
        { userId: user, targetId: 'old', lastUpdate: NOW - 60 * MIN },
        { userId: user, targetId: 'new', lastUpdate: NOW - 10 * MIN },
        { userId: user, targetId: 'read', lastUpdate: NOW - 5 * MIN, hasRead: true },
        {
          userId: user,
          targetId: 'expired',
          lastUpdate: NOW - 5 * MIN,
          expired: true,
        },
        { userId: 'someone-else', targetId: 'theirs', lastUpdate: NOW - 5 * MIN },
      ]);
    });

    it('counts the caller’s unexpired records not marked read', async () => {
      const res = await request(app())
        .get('/notifications/v3')
        .set('Authorization', await bearer(user))
        .expect(200);
      expect(res.body).to.deep.equal({ data: { totalUnreadCount: 2, totalUnseenCount: 2 } });
    });

    // It takes no parameter: one sent for something it would ignore (another user's id) is refused.
    it('refuses a query parameter with 400 naming it', async () => {
      const res = await request(app())
        .get('/notifications/v3?userId=someone-else')
        .set('Authorization', await bearer(user))
        .expect(400);
      expect(res.body).to.deep.equal({
        status: 'error',
        code: 400001,
        message: 'query: unknown parameter userId',
      });
      expectMatchesOpenApi(res, 'GET', '/notifications/v3');
    });

    // Express's query parser kept the first 1,000 keys and dropped the rest: empty ones count, so a
    // parameter after 1,000 `&` slipped past every check of the parameters a call takes.
    it('refuses a parameter however many empty ones come before it', async () => {
      const res = await request(app())
        .get(`/notifications/v3?${'&'.repeat(1000)}userId=someone-else`)
        .set('Authorization', await bearer(user))
        .expect(400);
      expect(res.body.message).to.equal('query: unknown parameter userId');
    });

    describe('after POST /notifications/v2/last-read', () => {
      it('counts only records updated after the last-read time', async () => {
        const lastRead = NOW - 30 * MIN;
        const res = await request(api.app({ now: () => lastRead }))
          .post('/notifications/v2/last-read')
          .set('Authorization', await bearer(user))
          .expect(200);
        expect(res.body).to.deep.equal({ data: 'success' });
        const count = await request(app())
          .get('/notifications/v3')
          .set('Authorization', await bearer(user));
        expect(count.body).to.deep.equal({ data: { totalUnreadCount: 1, totalUnseenCount: 1 } });
      });
    });
  });

  describe('GET /notifications/v3/history', () => {
    const user = 'history-user';
    before(async () => {
      await seedRecords(api.storage, [
        ...Array.from({ length: 12 }, (_, i) => ({
          userId: user,
          targetId: `t${String(i).padStart(2, '0')}`,
          lastUpdate: NOW - i * MIN,
        })),
        {
          userId: user,
          targetId: 'expired',
          lastUpdate: NOW - 90 * MIN,
          expired: true,
        },
      ]);
    });

    it('answers the first page newest first with totalPages and nextPage', async () => {
      const res = await request(app())
        .get('/notifications/v3/history')
        .set('Authorization', await bearer(user))
        .expect(200);
      expect(res.body.totalPages).to.equal(2);
      expect(res.body.nextPage).to.equal(NOW - 9 * MIN);
      expect(res.body.data.map((r: { targetId: string }) => r.targetId)).to.deep.equal(
        Array.from({ length: 10 }, (_, i) => `t${String(i).padStart(2, '0')}`),
      );
      expect(res.headers['content-language']).to.equal('en');
    });

    it('maps each record to the public NotificationRecord shape', async () => {
      const res = await request(app())
        .get('/notifications/v3/history?startAfter=1')
        .set('Authorization', await bearer(user))
        .expect(200);
      expect(res.body.data[0]).to.deep.equal({
        v_tarid_uid: `comment_t00_${user}`,
        description: 'Ana commented on your post in Hiking Club',
        verb: 'comment',
        imageUrl: 'https://img.example/ana.png',
        targetType: 'post',
        targetName: 'A day out',
        hasRead: false,
        lastUpdate: NOW,
        actors: [{ name: 'Ana' }],
        actorsCount: 1,
        targetId: 't00',
        lastActionId: 'comment-1',
        isSeen: false,
        archivedAt: null,
        snoozedUntil: null,
      });
    });

    it('answers the last page with nextPage 0, and an empty page after it', async () => {
      const auth = await bearer(user);
      const second = await request(app())
        .get(`/notifications/v3/history?startAfter=${NOW - 9 * MIN}`)
        .set('Authorization', auth)
        .expect(200);
      expect(second.body.data.map((r: { targetId: string }) => r.targetId)).to.deep.equal(['t10', 't11']);
      expect(second.body.nextPage).to.equal(0);
      const after = await request(app())
        .get('/notifications/v3/history?startAfter=0')
        .set('Authorization', auth);
      expect(after.body).to.deep.equal({ totalPages: 2, nextPage: 0, data: [] });
    });

    it('renders descriptions in the ?locale= language and says so in Content-Language', async () => {
      const en = await request(app())
        .get('/notifications/v3/history')
        .set('Authorization', await bearer(user));
      const res = await request(app())
        .get('/notifications/v3/history?locale=de')
        .set('Authorization', await bearer(user))
        .expect(200);
      expect(res.headers['content-language']).to.equal('de');
      expect(res.body.data[0].description).to.be.a('string').and.not.equal(en.body.data[0].description);
      expect(res.body.data[0].description).to.include('Ana');
    });

    it('negotiates the language from Accept-Language when there is no ?locale=', async () => {
      const res = await request(app())
        .get('/notifications/v3/history')
        .set('Authorization', await bearer(user))
        .set('Accept-Language', 'xx, fr;q=0.8, en;q=0.5')
        .expect(200);
      expect(res.headers['content-language']).to.equal('fr');
      expect(res.headers.vary).to.match(/Accept-Language/i);
    });

    it('passes ?locale=* on to Accept-Language: "*" is no locale tag', async () => {
      const res = await request(app())
        .get('/notifications/v3/history?locale=*')
        .set('Authorization', await bearer(user))
        .set('Accept-Language', 'de')
        .expect(200);
      expect(res.headers['content-language']).to.equal('de');
    });

    // A tag that does not parse was dropped in silence: the caller got the default and no word why.
    // A well-formed tag the tray has no messages for still falls back (Content-Language says which).
    for (const path of ['/notifications/v3/history', '/notifications/v2/history'])
      it(`answers ${path}?locale= with a tag that does not parse 400 naming locale`, async () => {
        const auth = await bearer(user);
        for (const bad of ['!!!', 'de__DE', 'en--us', 'x', 'pt-'])
          expect(
            (await request(app()).get(`${path}?locale=${bad}`).set('Authorization', auth).expect(400)).body,
            bad,
          ).to.deep.include({ message: 'locale: expected a locale tag such as de or pt-BR, or *' });
        const unknown = await request(app()).get(`${path}?locale=tlh`).set('Authorization', auth).expect(200);
        expect(unknown.headers['content-language']).to.equal('en');
        const underscored = await request(app())
          .get(`${path}?locale=de_DE`)
          .set('Authorization', auth)
          .expect(200);
        expect(underscored.headers['content-language']).to.equal('de');
      });

    it('never answers a language Accept-Language refused with q=0, even shortened from a longer tag', async () => {
      const auth = await bearer(user);
      const en = await request(app()).get('/notifications/v3/history').set('Authorization', auth);
      const res = await request(app())
        .get('/notifications/v3/history')
        .set('Authorization', auth)
        .set('Accept-Language', 'fr-CA, fr;q=0')
        .expect(200);
      expect(res.headers['content-language']).to.equal('en');
      expect(res.body.data[0].description).to.equal(en.body.data[0].description);
    });

    it('takes any whole number of up to 16 digits as a cursor: one past the largest safe integer starts from the top', async () => {
      const auth = await bearer(user);
      const first = await request(app())
        .get('/notifications/v3/history')
        .set('Authorization', auth)
        .expect(200);
      for (const large of ['9007199254740992', '9999999999999999']) {
        const res = await request(app())
          .get(`/notifications/v3/history?startAfter=${large}`)
          .set('Authorization', auth)
          .expect(200);
        expect(res.body, large).to.deep.equal(first.body);
      }
    });

    const invalidToken = { status: 'error', code: 400002, message: 'Query Token is invalid' };
    for (const bad of ['abc', '-5', '1.5', '', '1e3', '99999999999999999', '%7B%22%24gt%22%3A0%7D']) {
      it(`answers startAfter=${bad} with 400 'Query Token is invalid'`, async () => {
        const res = await request(app())
          .get(`/notifications/v3/history?startAfter=${bad}`)
          .set('Authorization', await bearer(user))
          .expect(400);
        expect(res.body).to.deep.equal(invalidToken);
      });
    }

    it("answers a repeated startAfter with 400 'Query Token is invalid'", async () => {
      const res = await request(app())
        .get('/notifications/v3/history?startAfter=5&startAfter=6')
        .set('Authorization', await bearer(user))
        .expect(400);
      expect(res.body).to.deep.equal(invalidToken);
    });

    it('still names any other bad parameter, with the validation code', async () => {
      const res = await request(app())
        .get(`/notifications/v3/history?startAfter=5&locale=${'x'.repeat(40)}`)
        .set('Authorization', await bearer(user))
        .expect(400);
      expect(res.body).to.deep.equal({
        status: 'error',
        code: 400001,
        message: 'locale: expected a locale tag of at most 35 characters',
      });
    });

    // Served page 1 again, a client that kept v2's page=N would walk the first page for ever.
    for (const [query, message] of [
      [
        'page=2',
        "query: unknown parameter page (v3 history pages with startAfter: the previous page's nextPage)",
      ],
      ['startAfter=5&sort=asc', 'query: unknown parameter sort'],
    ]) {
      it(`refuses ?${query}, a parameter it does not take, with 400 naming it`, async () => {
        const res = await request(app())
          .get(`/notifications/v3/history?${query}`)
          .set('Authorization', await bearer(user))
          .expect(400);
        expect(res.body).to.deep.equal({ status: 'error', code: 400001, message });
        expectMatchesOpenApi(res, 'GET', '/notifications/v3/history');
      });
    }
  });

  describe('GET /notifications/v2/history', () => {
    const user = 'v2-user';
    before(async () => {
      await seedRecords(api.storage, [
        { userId: user, targetId: 'p1', verb: 'post', lastUpdate: NOW - 1 * MIN },
        {
          userId: user,
          targetId: 'm1',
          verb: 'mention',
          mentionIn: 'post',
          lastUpdate: NOW - 2 * MIN,
        },
        { userId: user, targetId: 'r1', verb: 'mentreact', lastUpdate: NOW - 3 * MIN },
      ]);
    });

    it('pages by page number without nextPage and leaves mentions out', async () => {
      const res = await request(app())
        .get('/notifications/v2/history?page=1')
        .set('Authorization', await bearer(user))
        .expect(200);
      expect(res.body).to.have.all.keys('totalPages', 'data');
      expect(res.body.totalPages).to.equal(1);
      expect(res.body.data.map((r: { targetId: string }) => r.targetId)).to.deep.equal(['p1', 'r1']);
    });

    it('answers page=0 with 400 naming page', async () => {
      const res = await request(app())
        .get('/notifications/v2/history?page=0')
        .set('Authorization', await bearer(user))
        .expect(400);
      expect(res.body.message).to.match(/^page: /);
    });

    // v2 lists the inbox by page number: a v3 parameter it ignored would answer another list.
    for (const [query, message] of [
      [
        'view=archived',
        'query: unknown parameter view (v2 history lists the inbox only; v3 history takes view)',
      ],
      ['startAfter=5', 'query: unknown parameter startAfter (v2 history pages with page, from 1)'],
      ['page=1&size=50', 'query: unknown parameter size'],
    ]) {
      it(`refuses ?${query}, a parameter it does not take, with 400 naming it`, async () => {
        const res = await request(app())
          .get(`/notifications/v2/history?${query}`)
          .set('Authorization', await bearer(user))
          .expect(400);
        expect(res.body).to.deep.equal({ status: 'error', code: 400001, message });
        expectMatchesOpenApi(res, 'GET', '/notifications/v2/history');
      });
    }
  });

  describe('GET /notifications/v3/mark-all-as-read', () => {
    it('marks every record of the caller read and only theirs', async () => {
      const user = 'mark-all-user';
      await seedRecords(api.storage, [
        { userId: user, targetId: 'a', lastUpdate: NOW - MIN },
        { userId: user, targetId: 'b', lastUpdate: NOW - MIN },
        { userId: 'bystander-1', targetId: 'a', lastUpdate: NOW - MIN },
      ]);
      const res = await request(app())
        .get('/notifications/v3/mark-all-as-read')
        .set('Authorization', await bearer(user))
        .expect(200);
      expect(res.body.data.message).to.be.a('string');
      const count = await request(app())
        .get('/notifications/v3')
        .set('Authorization', await bearer(user));
      expect(count.body.data.totalUnreadCount).to.equal(0);
      const other = await request(app())
        .get('/notifications/v3')
        .set('Authorization', await bearer('bystander-1'));
      expect(other.body.data.totalUnreadCount).to.equal(1);
    });

    it('answers HEAD 405 with Allow: GET and marks nothing (a link checker must not clear the tray)', async () => {
      const user = 'mark-all-head';
      await seedRecords(api.storage, [
        { userId: user, targetId: 'a', lastUpdate: NOW - MIN },
        { userId: user, targetId: 'b', lastUpdate: NOW - MIN },
      ]);
      const res = await request(app())
        .head('/notifications/v3/mark-all-as-read')
        .set('Authorization', await bearer(user))
        .expect(405);
      expect(res.headers.allow).to.equal('GET');
      const count = await request(app())
        .get('/notifications/v3')
        .set('Authorization', await bearer(user));
      expect(count.body.data.totalUnreadCount).to.equal(2);
    });
  });

  describe('POST /notifications/v2/read', () => {
    const user = 'read-user';
    before(async () => {
      await seedRecords(api.storage, [
        { userId: user, verb: 'reaction', targetId: 'x1', lastUpdate: NOW - MIN },
        { userId: user, verb: 'mention', targetId: 'x2', lastUpdate: NOW - MIN },
      ]);
    });

    for (const [verb, targetId] of [
      ['reaction', 'x1'],
      ['mention', 'x2'],
    ] as const) {
      it(`marks the ${verb} record read`, async () => {
        const res = await request(app())
          .post('/notifications/v2/read')
          .set('Authorization', await bearer(user))
          .send({ verb, targetId })
          .expect(200);
        expect(res.body).to.deep.equal({ data: 'success' });
        const stored = (await readAll(api.storage, user, NOW)).find(
          (record) => record.verb === verb && record.targetId === targetId,
        );
        expect(stored?.hasRead).to.equal(true);
      });
    }

    it('answers 404 when the caller has no such record (even if another user has)', async () => {
      const res = await request(app())
        .post('/notifications/v2/read')
        .set('Authorization', await bearer('read-user-2'))
        .send({ verb: 'reaction', targetId: 'x1' })
        .expect(404);
      expect(res.body).to.include({ status: 'error', code: 404000 });
    });

    it('answers an object where targetId should be a string with 400 naming targetId', async () => {
      const res = await request(app())
        .post('/notifications/v2/read')
        .set('Authorization', await bearer(user))
        .send({ verb: 'reaction', targetId: { $ne: null } })
        .expect(400);
      expect(res.body.message).to.match(/^targetId: /);
    });

    it('answers a targetId holding U+0000 (no stored id can) with 400 naming targetId', async () => {
      const res = await request(app())
        .post('/notifications/v2/read')
        .set('Authorization', await bearer(user))
        .send({ verb: 'comment', targetId: 'p\u0000' })
        .expect(400);
      expect(res.body).to.deep.equal({
        status: 'error',
        code: 400001,
        message: 'targetId: expected no U+0000 character and no lone surrogate',
      });
    });

    it('answers a field it does not take with 400 naming it, marking nothing', async () => {
      await seedRecords(api.storage, [{ userId: user, verb: 'post', targetId: 'x3', lastUpdate: NOW - MIN }]);
      const before = await readAll(api.storage, user, NOW);
      const res = await request(app())
        .post('/notifications/v2/read')
        .set('Authorization', await bearer(user))
        .send({ verb: 'post', targetId: 'x3', all: true })
        .expect(400);
      expect(res.body).to.deep.equal({ status: 'error', code: 400001, message: 'body: unknown field all' });
      expectMatchesOpenApi(res, 'POST', '/notifications/v2/read');
      expect(await readAll(api.storage, user, NOW)).to.deep.equal(before);
    });

    it('names a misspelt field by the name sent, not the one it stands for as missing', async () => {
      await seedRecords(api.storage, [{ userId: user, verb: 'post', targetId: 'x4', lastUpdate: NOW - MIN }]);
      const before = await readAll(api.storage, user, NOW);
      const res = await request(app())
        .post('/notifications/v2/read')
        .set('Authorization', await bearer(user))
        .send({ verb: 'post', targetID: 'x4' })
        .expect(400);
      expect(res.body).to.deep.equal({
        status: 'error',
        code: 400001,
        message: 'body: unknown field targetID',
      });
      expect(await readAll(api.storage, user, NOW)).to.deep.equal(before);
    });

    // The body names the record; a parameter beside it (another user's id) would be ignored.
    it('answers a query parameter with 400 naming it, marking nothing', async () => {
      await seedRecords(api.storage, [{ userId: user, verb: 'post', targetId: 'x4', lastUpdate: NOW - MIN }]);
      const before = await readAll(api.storage, user, NOW);
      const res = await request(app())
        .post('/notifications/v2/read?userId=someone-else')
        .set('Authorization', await bearer(user))
        .send({ verb: 'post', targetId: 'x4' })
        .expect(400);
      expect(res.body).to.deep.equal({
        status: 'error',
        code: 400001,
        message: 'query: unknown parameter userId',
      });
      expectMatchesOpenApi(res, 'POST', '/notifications/v2/read');
      expect(await readAll(api.storage, user, NOW)).to.deep.equal(before);
    });

    it('answers an unknown verb with 400 naming verb', async () => {
      const res = await request(app())
        .post('/notifications/v2/read')
        .set('Authorization', await bearer(user))
        .send({ verb: 'like', targetId: 'x1' })
        .expect(400);
      expect(res.body.message).to.match(/^verb: /);
    });

    it('answers a non-JSON body with 415', async () => {
      const res = await request(app())
        .post('/notifications/v2/read')
        .set('Authorization', await bearer(user))
        .set('Content-Type', 'text/plain')
        .send('verb=post')
        .expect(415);
      expect(res.body.code).to.equal(415000);
    });

    it('answers a body over 16 kB with 413', async () => {
      const res = await request(app())
        .post('/notifications/v2/read')
        .set('Authorization', await bearer(user))
        .send({ verb: 'post', targetId: 'x'.repeat(20_000) })
        .expect(413);
      expect(res.body.code).to.equal(413000);
    });

    for (const json of ['null', '5', '"x"']) {
      it(`answers the JSON ${json}, valid JSON but no object, with 400 naming the body`, async () => {
        const res = await request(app())
          .post('/notifications/v2/read')
          .set('Authorization', await bearer(user))
          .set('Content-Type', 'application/json')
          .send(json)
          .expect(400);
        expect(res.body).to.deep.equal({
          status: 'error',
          code: 400001,
          message: 'body: expected a JSON object',
        });
        expectMatchesOpenApi(res, 'POST', '/notifications/v2/read');
      });
    }

    it('answers malformed JSON with 400', async () => {
      const res = await request(app())
        .post('/notifications/v2/read')
        .set('Authorization', await bearer(user))
        .set('Content-Type', 'application/json')
        .send('{"verb":')
        .expect(400);
      expect(res.body.code).to.equal(400000);
    });
  });

  describe('DELETE /notifications/v3/delete-all', () => {
    it('resets totalPages at once on the same instance', async () => {
      const user = 'delete-count-user';
      await seedRecords(api.storage, [{ userId: user, targetId: 'a', lastUpdate: NOW - MIN }]);
      const same = app();
      const auth = await bearer(user);
      const before = await request(same).get('/notifications/v3/history').set('Authorization', auth);
      expect(before.body.totalPages).to.equal(1);
      await request(same).delete('/notifications/v3/delete-all').set('Authorization', auth).expect(200);
      const after = await request(same).get('/notifications/v3/history').set('Authorization', auth);
      expect(after.body).to.deep.equal({ totalPages: 0, nextPage: 0, data: [] });
    });

    // The records go first; a failure recording the clear after them (the database dropping the
    // connection) answered an error with the page count of the records already gone kept.
    it('resets totalPages at once also when it fails after deleting the records', async () => {
      const user = 'delete-fail-user';
      await seedRecords(api.storage, [{ userId: user, targetId: 'a', lastUpdate: NOW - MIN }]);
      const clears = Object.assign(Object.create(api.storage.clears) as typeof api.storage.clears, {
        record: () => Promise.reject(new Error('connection terminated unexpectedly')),
      });
      const same = api.app({ now: () => NOW, storage: { ...api.storage, clears } });
      const auth = await bearer(user);
      const before = await request(same).get('/notifications/v3/history').set('Authorization', auth);
      expect(before.body.totalPages).to.equal(1);
      const failed = await request(same).delete('/notifications/v3/delete-all').set('Authorization', auth);
      expect(failed.status).to.be.at.least(500);
      const after = await request(same).get('/notifications/v3/history').set('Authorization', auth);
      expect(after.body).to.deep.equal({ totalPages: 0, nextPage: 0, data: [] });
    });

    it('removes every record of the caller and only theirs', async () => {
      const user = 'delete-user';
      await seedRecords(api.storage, [
        { userId: user, targetId: 'a' },
        { userId: user, targetId: 'b' },
        { userId: 'bystander-2', targetId: 'a' },
      ]);
      const res = await request(app())
        .delete('/notifications/v3/delete-all')
        .set('Authorization', await bearer(user))
        .expect(200);
      expect(res.body).to.deep.equal({ data: 'success' });
      expect(await readAll(api.storage, user)).to.deep.equal([]);
      expect(await readAll(api.storage, 'bystander-2')).to.have.length(1);
    });
  });

  describe('a GET, whose input is its query', () => {
    const reads = [
      '/notifications/v3',
      '/notifications/v3/history',
      '/notifications/v2/history',
      '/notifications/v3/mutes',
      '/block/members?checkList=u-x',
    ];
    for (const path of reads) {
      it(`refuses GET ${path} with a body, naming it (a cursor sent there must not give page one)`, async () => {
        const res = await request(app())
          .get(path)
          .set('Authorization', await bearer('get-body-user'))
          .send({ startAfter: NOW });
        expect(res.status, res.text).to.equal(400);
        expect(res.body).to.deep.include({
          status: 'error',
          code: 400001,
          message: 'body: unknown field startAfter',
        });
        const text = await request(app())
          .get(path)
          .set('Authorization', await bearer('get-body-user'))
          .set('Content-Type', 'text/plain')
          .send('startAfter=1');
        expect(text.status, text.text).to.equal(415);
        const empty = await request(app())
          .get(path)
          .set('Authorization', await bearer('get-body-user'))
          .send({});
        expect(empty.status, empty.text).to.equal(200);
      });
    }
  });

  describe('a call that takes no input', () => {
    const calls = [
      ['get', '/notifications/v3/mark-all-as-read'],
      ['post', '/notifications/v2/last-read'],
      ['delete', '/notifications/v3/delete-all'],
    ] as const;
    const user = 'no-input-user';
    let keys: string[] = [];
    before(async () => {
      keys = await seedRecords(api.storage, [
        { userId: user, targetId: 'n1', lastUpdate: NOW - MIN },
        { userId: user, targetId: 'n2', lastUpdate: NOW - 2 * MIN },
      ]);
    });
    const called = (method: (typeof calls)[number][0], path: string) => request(app())[method](path);
    const tray = async () => ({
      records: await readAll(api.storage, user, NOW),
      counts: (
        await request(app())
          .get('/notifications/v3')
          .set('Authorization', await bearer(user))
      ).body,
    });

    for (const [method, path] of calls) {
      const refusals: [string, (call: request.Test) => request.Test, number, RegExp][] = [
        // A client that meant one record must not have every record deleted or marked.
        ['a JSON body', (call) => call.send({ ids: keys }), 400, /^body: unknown field ids$/],
        ['a JSON array', (call) => call.send(['x']), 400, /^body: expected no body/],
        [
          'a text body',
          (call) => call.set('Content-Type', 'text/plain').send('all'),
          415,
          /application\/json/,
        ],
        [
          'an XML body',
          (call) => call.set('Content-Type', 'application/xml').send('<ids><id>n1</id></ids>'),
          415,
          /application\/json/,
        ],
        [
          'query parameters',
          (call) => call.query({ verb: 'comment', targetId: 'n1' }),
          400,
          /^query: unknown parameter verb, targetId$/,
        ],
      ];
      for (const [what, send, status, message] of refusals) {
        it(`answers ${method.toUpperCase()} ${path} with ${what} ${status} naming it, changing nothing`, async () => {
          const before = await tray();
          const res = await send(called(method, path).set('Authorization', await bearer(user)));
          expect(res.status, res.text).to.equal(status);
          expect(res.body.message).to.match(message);
          expectMatchesOpenApi(res, method.toUpperCase(), path);
          expect(await tray()).to.deep.equal(before);
        });
      }

      it(`answers ${method.toUpperCase()} ${path} with an empty JSON object as with no body`, async () => {
        const res = await called(method, path)
          .set('Authorization', await bearer('no-input-empty'))
          .send({});
        expect(res.status, res.text).to.equal(200);
      });
    }
  });

  describe('with a method the path does not allow', () => {
    it('answers 405 with Allow', async () => {
      const res = await request(app()).put('/notifications/v3/delete-all').expect(405);
      expect(res.headers.allow).to.equal('DELETE');
      expect(res.body.code).to.equal(405000);
    });

    // HEAD is served on the reads (Express answers it with their GET), so Allow names it; on
    // mark-all-as-read it is refused (a link checker must not clear the tray), so it does not.
    for (const [method, path, allow] of [
      ['post', '/notifications/v3', 'GET, HEAD'],
      ['post', '/notifications/v3/history', 'GET, HEAD'],
      ['post', '/notifications/v2/history', 'GET, HEAD'],
      ['post', '/notifications/v3/mutes', 'GET, HEAD, PUT, DELETE'],
      ['put', '/block/members', 'GET, HEAD, POST, DELETE'],
      ['post', '/notifications/v3/mark-all-as-read', 'GET'],
    ] as const) {
      it(`names the methods ${path} serves: ${allow}`, async () => {
        const res = await request(app())[method](path).expect(405);
        expect(res.headers.allow).to.equal(allow);
      });
    }
  });
});

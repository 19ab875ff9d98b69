import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import type { NotificationRecord } from '../../../../tray-service/http/to-notification-record.ts';
import type { StorageEngine } from '../../../../tray-service/storage/port.ts';
import { aComment } from '../../../support/activity-builder.ts';
import { seedRecords } from '../../../support/seed-tray.ts';
import { bearer, useTrayApi } from '../support/api-harness.ts';
import { expectMatchesOpenApi } from '../support/openapi-validator.ts';
import { MAX_EVENT_ID_LENGTH } from '../../../../tray-service/domain/event-id.ts';
import { encodeRecordKey } from '../../../../tray-service/domain/record-key.ts';
import { trayVerbs } from '../../../../tray-service/domain/tray-verb.ts';
import { BODY_LIMIT_KB, RECORDS_BODY_LIMIT_KB } from '../../../../tray-service/http/api-schema/body-limit.ts';
import { MAX_IDS } from '../../../../tray-service/http/api-schema/inbox-schemas.ts';
import {
  MAX_MUTE_SPANS_PER_TARGET,
  MAX_MUTE_SPANS_PER_USER,
  MAX_MUTES_IN_FORCE,
} from '../../../../tray-service/domain/mute.ts';

const NOW = Date.UTC(2026, 0, 15, 12);
const MIN = 60_000;

type Method = 'get' | 'post' | 'put' | 'delete';

/** JSON as an encoder that escapes every non-ASCII character writes it (Python's json.dumps). */
const asciiJson = (value: unknown) =>
  JSON.stringify(value, null, 2).replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

/** The inbox endpoints of docs/tray-api.md#the-inbox, on the real app over `engine`'s storage. */
function inboxSuite(engine?: StorageEngine) {
  const api = useTrayApi(engine ? { engine } : {});
  const full = engine === undefined;
  let clock = NOW;
  const app = (): Express => api.app({ now: () => clock });
  beforeEach(() => {
    clock = NOW;
  });

  /** A call as `user`; every answer is checked against the OpenAPI document. */
  async function call(user: string, method: Method, path: string, body?: unknown) {
    const auth = await bearer(user);
    const base = request(app())[method](`/notifications${path}`).set('Authorization', auth);
    const res = body === undefined ? await base : await base.send(body as object);
    expectMatchesOpenApi(res, method.toUpperCase(), `/notifications${path.split('?')[0]}`);
    return res;
  }
  const history = async (user: string, view = '') =>
    (await call(user, 'get', `/v3/history${view ? `?view=${view}` : ''}`)).body as {
      totalPages: number;
      nextPage: number;
      data: NotificationRecord[];
    };
  const ids = async (user: string, view = '') => (await history(user, view)).data.map((r) => r.targetId);
  const counts = async (user: string) => (await call(user, 'get', '/v3')).body.data;
  const updated = async (user: string, kind: string, body: unknown) => {
    const res = await call(user, 'post', `/v3/records/${kind}`, body);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data.updated as number;
  };

  /** Three records of `user` (a, b read, c), newest first, and one of `other`; their keys by target. */
  async function seed(user: string, other: string) {
    const [a, b, c, theirs] = await seedRecords(api.storage, [
      { userId: user, targetId: `${user}-a`, lastUpdate: NOW - 1 * MIN },
      { userId: user, targetId: `${user}-b`, lastUpdate: NOW - 2 * MIN, hasRead: true },
      { userId: user, targetId: `${user}-c`, lastUpdate: NOW - 3 * MIN },
      { userId: other, targetId: `${other}-x`, lastUpdate: NOW - 1 * MIN },
    ]);
    return { a: a!, b: b!, c: c!, theirs: theirs! };
  }

  describe('GET /notifications/v3 and /v3/history', () => {
    it('gives records their inbox state and counts unseen beside unread, the inbox only', async () => {
      const keys = await seed('u-counts', 'u-counts-other');
      expect(await counts('u-counts')).to.deep.equal({ totalUnreadCount: 2, totalUnseenCount: 2 });
      const [first] = (await history('u-counts')).data;
      expect(first).to.include({ isSeen: false, archivedAt: null, snoozedUntil: null });
      expect(await updated('u-counts', 'archive', { ids: [keys.a] })).to.equal(1);
      expect(await updated('u-counts', 'snooze', { ids: [keys.c], until: NOW + 5 * MIN })).to.equal(1);
      expect(await counts('u-counts')).to.deep.equal({ totalUnreadCount: 0, totalUnseenCount: 0 });
      expect(await ids('u-counts')).to.deep.equal(['u-counts-b']);
      expect(await ids('u-counts', 'inbox')).to.deep.equal(['u-counts-b']);
      expect(await ids('u-counts', 'archived')).to.deep.equal(['u-counts-a']);
      expect(await ids('u-counts', 'snoozed')).to.deep.equal(['u-counts-c']);
      expect(await ids('u-counts', 'all')).to.deep.equal(['u-counts-a', 'u-counts-b', 'u-counts-c']);
      const archived = await history('u-counts', 'archived');
      expect(archived.totalPages).to.equal(1);
      expect(archived.data[0]).to.include({ archivedAt: NOW, snoozedUntil: null, isSeen: false });
      expect((await history('u-counts', 'snoozed')).data[0]).to.include({ snoozedUntil: NOW + 5 * MIN });
      // v2 lists the inbox only, and its records carry no inbox state.
      const v2 = await call('u-counts', 'get', '/v2/history');
      expect(v2.body.data.map((r: NotificationRecord) => r.targetId)).to.deep.equal(['u-counts-b']);
      expect(v2.body.data[0]).not.to.have.property('isSeen');
    });

    it('answers an unknown view with 400 naming it', async () => {
      const res = await call('u-view', 'get', '/v3/history?view=trash');
      expect(res.status).to.equal(400);
      expect(res.body.message).to.match(/^view: expected one of inbox, archived, snoozed, all/);
    });

    it('sees on last-read the records it stops counting as unread', async () => {
      await seed('u-last', 'u-last-other');
      clock = NOW + MIN;
      await call('u-last', 'post', '/v2/last-read');
      expect(await counts('u-last')).to.deep.equal({ totalUnreadCount: 0, totalUnseenCount: 0 });
      expect((await history('u-last')).data.map((r) => r.isSeen)).to.deep.equal([true, true, true]);
    });
  });

  if (full)
    describe('on a storage adapter without the inbox extensions', () => {
      const bare = () => api.app({ now: () => clock, storage: { ...api.storage, inbox: undefined } });
      const get = async (path: string) =>
        request(bare())
          .get(`/notifications${path}`)
          .set('Authorization', await bearer('u-bare'));

      it("answers the platform's count and history, and 501 to every inbox call", async () => {
        await seed('u-bare', 'u-bare-other');
        expect((await get('/v3')).body).to.deep.equal({ data: { totalUnreadCount: 2 } });
        const page = await get('/v3/history');
        expect(page.body.data).to.have.length(3);
        expect(page.body.data[0]).not.to.have.property('isSeen');
        const refused = [
          await get('/v3/history?view=archived'),
          await get('/v3/mutes'),
          await request(bare())
            .post('/notifications/v3/records/seen')
            .set('Authorization', await bearer('u-bare'))
            .send({ all: true }),
        ];
        for (const res of refused) {
          expect(res.status).to.equal(501);
          expect(res.body).to.include({ status: 'error', code: 501000 });
          expect(res.body.message).to.match(/does not support the inbox/);
        }
        // The marks of the inbox's own storage never ran: every record is still unseen or read.
        expect(await counts('u-bare')).to.deep.equal({ totalUnreadCount: 2, totalUnseenCount: 2 });
      });
    });

  describe('POST /notifications/v3/records/*', () => {
    it("counts what changed, ignores another user's, unknown and repeated ids, and never touches theirs", async () => {
      const keys = await seed('u-ana', 'u-ben');
      const before = await history('u-ben', 'all');
      expect(
        await updated('u-ana', 'seen', { ids: [keys.a, keys.a, keys.theirs, 'comment_none_u-ana'] }),
      ).to.equal(1);
      expect(await updated('u-ana', 'seen', { ids: [keys.a] })).to.equal(0);
      // Strings no record key can be (empty, longer than any, text storage cannot hold) are
      // unknown ids like the rest: ignored, and the call still marks the caller's.
      for (const unknown of ['', 'k'.repeat(1_025), 'k\u0000', 'k\uD800']) {
        const what = JSON.stringify(unknown).slice(0, 20);
        expect(await updated('u-ana', 'archive', { ids: [unknown, keys.a] }), what).to.equal(1);
        expect(await updated('u-ana', 'unarchive', { ids: [keys.a, unknown] }), what).to.equal(1);
        expect(await updated('u-ana', 'unsnooze', { ids: [unknown] }), what).to.equal(0);
      }
      // b was read, which sees it too: only c is left.
      expect(await updated('u-ana', 'seen', { all: true })).to.equal(1);
      expect(await updated('u-ana', 'seen', { all: true })).to.equal(0);
      const theirs = { ids: [keys.theirs] };
      for (const [kind, body] of [
        ['archive', theirs],
        ['snooze', { ...theirs, until: NOW + MIN }],
        ['unarchive', theirs],
        ['unsnooze', theirs],
      ] as const)
        expect(await updated('u-ana', kind, body), kind).to.equal(0);
      expect(await history('u-ben', 'all')).to.deep.equal(before);
      expect(await counts('u-ben')).to.deep.equal({ totalUnreadCount: 1, totalUnseenCount: 1 });
    });

    // A MongoDB mark that stops part-way (storage lost after some records changed) fails the call
    // with what it changed already: the page counts of the views must not keep the old figures.
    if (full)
      it('resets totalPages at once also when a mark fails after changing records', async () => {
        const keys = await seed('u-partial', 'u-partial-other');
        const inbox = api.storage.inbox!;
        const failing = Object.assign(Object.create(inbox) as typeof inbox, {
          mark: async (...args: Parameters<typeof inbox.mark>) => {
            await inbox.mark(...args);
            throw new Error('connection lost after the first writes');
          },
        });
        const same = api.app({ now: () => clock, storage: { ...api.storage, inbox: failing } });
        const auth = await bearer('u-partial');
        const archived = () =>
          request(same).get('/notifications/v3/history?view=archived').set('Authorization', auth);
        expect((await archived()).body.totalPages).to.equal(0);
        const failed = await request(same)
          .post('/notifications/v3/records/archive')
          .set('Authorization', auth)
          .send({ ids: [keys.a] });
        expect(failed.status).to.be.at.least(500);
        expect((await archived()).body).to.deep.include({ totalPages: 1 });
      });

    if (full)
      it('refuses a snooze longer than TRAY_RETENTION_DAYS when that is under 90 days: the record would never come back', async () => {
        const keys = await seed('u-short', 'u-short-other');
        const short = api.app({
          now: () => clock,
          settings: { pageSize: 10, networkId: 'net1', blockApi: true, retentionDays: 7 },
        });
        const auth = await bearer('u-short');
        const snooze = (until: number) =>
          request(short)
            .post('/notifications/v3/records/snooze')
            .set('Authorization', auth)
            .send({ ids: [keys.a], until });
        const refused = await snooze(NOW + 7 * DAY_MS + 1).expect(400);
        expect(refused.body).to.deep.include({
          code: 400001,
          message: "until: expected at most 7 days from now (the records' retention)",
        });
        expect(await ids('u-short', 'snoozed')).to.deep.equal([]);
        expect((await snooze(NOW + 6 * DAY_MS).expect(200)).body).to.deep.equal({ data: { updated: 1 } });
      });

    it('counts duplicate ids once against the 100: 101 entries holding 100 ids are one call', async () => {
      const keys = await seed('u-dups', 'u-dups-other');
      const unknown = Array.from({ length: 98 }, (_, i) => `comment_none${i}_u-dups`);
      expect(await updated('u-dups', 'seen', { ids: [keys.a, keys.a, keys.c, ...unknown] })).to.equal(2);
    });

    it('takes 100 distinct keys of the longest length, however the JSON encoder writes them (not 413)', async () => {
      const verb = trayVerbs.reduce((a, b) => (b.length > a.length ? b : a));
      // The longest `until` a snooze takes: an ISO 8601 time of 80 characters.
      const until = `${new Date(NOW + MIN).toISOString().slice(0, 20)}${'0'.repeat(59)}Z`;
      // Ids of `_` and `%` only, each written in 3: the longest keys in characters.
      const escaped = (i: number) =>
        Array.from({ length: MAX_EVENT_ID_LENGTH }, (_, bit) => (bit < 7 && (i >> bit) & 1 ? '%' : '_'));
      const longest = Array.from({ length: MAX_IDS }, (_, i) =>
        encodeRecordKey({ verb, targetId: escaped(i).join(''), userId: escaped(i + 1).join('') }),
      );
      expect(longest[0]).to.have.length(verb.length + 2 + 2 * 3 * MAX_EVENT_ID_LENGTH);
      // Ids of characters written as `\uXXXX`, 6 bytes each: the longest keys in bytes.
      const wide = (i: number) => String.fromCharCode(0x4e00 + i).repeat(MAX_EVENT_ID_LENGTH);
      const widest = Array.from({ length: MAX_IDS }, (_, i) =>
        encodeRecordKey({ verb, targetId: wide(i), userId: wide(i + 1) }),
      );
      for (const keys of [longest, widest]) expect(new Set(keys).size).to.equal(MAX_IDS);
      const auth = await bearer('u-long');
      for (const text of [JSON.stringify({ ids: longest, until }), asciiJson({ ids: widest, until })]) {
        expect(Buffer.byteLength(text)).to.be.above(BODY_LIMIT_KB * 1024);
        const res = await request(app())
          .post('/notifications/v3/records/snooze')
          .set('Authorization', auth)
          .set('Content-Type', 'application/json')
          .send(text);
        expect(res.status, `${Buffer.byteLength(text)} bytes: ${JSON.stringify(res.body)}`).to.equal(200);
        expect(res.body).to.deep.equal({ data: { updated: 0 } });
        expectMatchesOpenApi(res, 'POST', '/notifications/v3/records/snooze');
      }
    });

    it('archives all, or all read, keeping the first archivedAt; unarchive brings records back as they were', async () => {
      const keys = await seed('u-arch', 'u-arch-other');
      expect(await updated('u-arch', 'archive', { all: true, readOnly: true })).to.equal(1);
      expect(await ids('u-arch', 'archived')).to.deep.equal(['u-arch-b']);
      clock = NOW + MIN;
      // readOnly false, as a client that always sends the flag does: every record, as without it.
      expect(await updated('u-arch', 'archive', { all: true, readOnly: false })).to.equal(2);
      expect(await updated('u-arch', 'archive', { ids: [keys.b] })).to.equal(0);
      const archived = (await history('u-arch', 'archived')).data;
      expect(archived.map((r) => [r.targetId, r.archivedAt])).to.deep.equal([
        ['u-arch-a', NOW + MIN],
        ['u-arch-b', NOW],
        ['u-arch-c', NOW + MIN],
      ]);
      expect(await updated('u-arch', 'unarchive', { ids: [keys.b, keys.c] })).to.equal(2);
      expect(await updated('u-arch', 'unarchive', { ids: [keys.b] })).to.equal(0);
      const back = (await history('u-arch')).data;
      expect(back.map((r) => [r.targetId, r.hasRead, r.archivedAt])).to.deep.equal([
        ['u-arch-b', true, null],
        ['u-arch-c', false, null],
      ]);
    });

    it('snoozes until a later time given as ms or ISO 8601, and unsnoozes as it was', async () => {
      const keys = await seed('u-snooze', 'u-snooze-other');
      const until = NOW + 5 * MIN;
      expect(await updated('u-snooze', 'snooze', { ids: [keys.a], until })).to.equal(1);
      expect(await updated('u-snooze', 'snooze', { ids: [keys.a], until })).to.equal(0);
      const iso = new Date(until + MIN).toISOString();
      expect(await updated('u-snooze', 'snooze', { ids: [keys.a, keys.c], until: iso })).to.equal(2);
      expect((await history('u-snooze', 'snoozed')).data.map((r) => r.snoozedUntil)).to.deep.equal([
        until + MIN,
        until + MIN,
      ]);
      expect(await updated('u-snooze', 'unsnooze', { ids: [keys.a] })).to.equal(1);
      expect(await updated('u-snooze', 'unsnooze', { ids: [keys.a] })).to.equal(0);
      expect(await ids('u-snooze')).to.deep.equal(['u-snooze-a', 'u-snooze-b']);
    });

    // Serialisers that keep microseconds or nanoseconds, and offsets written +hhmm or +hh.
    it('snoozes until an ISO 8601 time with any fraction (kept to the millisecond) and any offset form', async () => {
      const keys = await seed('u-snooze-iso', 'u-snooze-iso-other');
      const until = NOW + 5 * MIN + 97;
      const forms = [
        new Date(until).toISOString().replace('Z', '000Z'),
        new Date(until + MIN).toISOString().replace('.097Z', '.097999999+0000'),
        new Date(until + 2 * MIN + 60 * MIN).toISOString().replace('.097Z', '.097+01'),
      ];
      const snoozedUntil = async () =>
        (await history('u-snooze-iso', 'snoozed')).data.map((r) => r.snoozedUntil);
      expect(await updated('u-snooze-iso', 'snooze', { ids: [keys.a], until: forms[0] })).to.equal(1);
      expect(await snoozedUntil()).to.deep.equal([until]);
      expect(await updated('u-snooze-iso', 'snooze', { ids: [keys.a], until: forms[1] })).to.equal(1);
      expect(await snoozedUntil()).to.deep.equal([until + MIN]);
      expect(await updated('u-snooze-iso', 'snooze', { ids: [keys.a], until: forms[2] })).to.equal(1);
      expect(await snoozedUntil()).to.deep.equal([until + 2 * MIN]);
    });

    // Parsing is the router's, the same on every adapter: checked once.
    if (full)
      describe('with a body outside the contract', () => {
        const id = 'comment_x_u-bad';
        const bad: [string, unknown, RegExp][] = [
          ['seen', {}, /^ids: expected ids or all \(one of the two\)$/],
          ['seen', { ids: [id], all: true }, /^ids: expected either ids or all, not both$/],
          ['seen', { all: false }, /^all: expected true/],
          ['seen', { ids: [] }, /^ids: expected 1 to 100 ids/],
          [
            'seen',
            { ids: Array.from({ length: 101 }, (_, i) => `${id}${i}`) },
            /^ids: expected 1 to 100 ids/,
          ],
          // 101 distinct ids; and more entries than any call of 100 ids needs, however repeated.
          [
            'seen',
            { ids: [...Array.from({ length: 100 }, (_, i) => `${id}${i}`), id] },
            /^ids: expected 1 to 100 ids/,
          ],
          [
            'seen',
            // Short ones: their count, not the body limit (413), refuses them.
            { ids: Array.from({ length: 1_001 }, () => 'k') },
            /^ids: expected at most 1000 entries \(1 to 100 ids, duplicates counting once\)$/,
          ],
          ['seen', { ids: [3] }, /^ids\.0: expected a string/],

          ['seen', { ids: [id], extra: 1 }, /^body: unknown field extra/],
          ['archive', { ids: [id], readOnly: true }, /^readOnly: only with all/],
          ['archive', { ids: [id], readOnly: false }, /^readOnly: only with all/],
          ['archive', { all: true, readOnly: 'yes' }, /^readOnly: expected a boolean/],
          ['unarchive', { all: true }, /ids|all/],
          ['unsnooze', {}, /^ids: /],
          ['snooze', { ids: [id] }, /^until: /],
          ['snooze', { ids: [id], until: NOW }, /^until: expected a time later than now/],
          ['snooze', { ids: [id], until: NOW - 1 }, /^until: expected a time later than now/],
          [
            'snooze',
            { ids: [id], until: NOW + 90 * DAY_MS + 1 },
            /^until: expected at most 90 days from now/,
          ],
          [
            'snooze',
            { ids: [id], until: 'tomorrow' },
            /^until: expected an integer time \(ms\) or an ISO 8601 date-time with its offset \(Z, ±hh:mm, ±hhmm or ±hh\)$/,
          ],
          // ISO 8601 all the same, but whose time zone would be the server's: the answer says what is missing.
          [
            'snooze',
            { ids: [id], until: '2026-01-16T00:00:00' },
            /^until: expected an offset after the time \(Z, ±hh:mm, ±hhmm or ±hh\)/,
          ],
          ['snooze', { ids: [id], until: '2026-01-16' }, /^until: expected a time after the date/],
          [
            'snooze',
            { ids: [id], until: true },
            /^until: expected an integer time \(ms\) or an ISO 8601 date-time with its offset \(Z, ±hh:mm, ±hhmm or ±hh\)$/,
          ],
          ['snooze', { ids: [id], until: 1.5 }, /^until: /],
          // Days a month does not have and hour 24, which Date.parse rolls over into the next ones.
          ...['2026-02-30T10:00:00Z', '2026-02-29T10:00:00Z', '2026-01-20T24:00:00Z'].map(
            (until): [string, unknown, RegExp] => [
              'snooze',
              { ids: [id], until },
              /^until: expected a date and time that exist/,
            ],
          ),
        ];
        for (const [kind, body, message] of bad) {
          it(`answers ${kind} ${JSON.stringify(body).slice(0, 60)} with 400 naming the problem, changing nothing`, async () => {
            const keys = await seed('u-bad', 'u-bad-other');
            const before = await history('u-bad', 'all');
            const sent = JSON.parse(JSON.stringify(body).replaceAll(id, keys.a)) as unknown;
            const res = await call('u-bad', 'post', `/v3/records/${kind}`, sent);
            expect(res.status).to.equal(400);
            expect(res.body).to.include({ status: 'error', code: 400001 });
            expect(res.body.message).to.match(message);
            expect(await history('u-bad', 'all')).to.deep.equal(before);
          });
        }

        it('answers a query parameter beside the body with 400 naming it, changing nothing', async () => {
          const keys = await seed('u-bad-query', 'u-bad-query-other');
          const before = await history('u-bad-query', 'all');
          const res = await call('u-bad-query', 'post', '/v3/records/seen?userId=u-bad-query-other', {
            ids: [keys.a],
          });
          expect(res.status).to.equal(400);
          expect(res.body).to.deep.equal({
            status: 'error',
            code: 400001,
            message: 'query: unknown parameter userId',
          });
          expect(await history('u-bad-query', 'all')).to.deep.equal(before);
        });

        it(`answers a body past ${RECORDS_BODY_LIMIT_KB} kB with 413, and one of the mutes past ${BODY_LIMIT_KB} kB`, async () => {
          const auth = await bearer('u-big');
          /** `body` padded to `bytes` bytes. */
          const sized = (bytes: number, body: (pad: string) => string) =>
            body('k'.repeat(bytes - Buffer.byteLength(body(''))));
          const records = (bytes: number) => sized(bytes, (pad) => JSON.stringify({ ids: [pad] }));
          const mute = sized(BODY_LIMIT_KB * 1024 + 1, (pad) =>
            JSON.stringify({ targetType: 'post', targetId: pad }),
          );
          const send = (method: 'post' | 'put', path: string, text: string) => {
            const agent = request(app());
            return agent[method](`/notifications${path}`)
              .set('Authorization', auth)
              .set('Content-Type', 'application/json')
              .send(text);
          };
          // At the limit: the one id, too long to be a key, is an unknown one.
          const atLimit = await send('post', '/v3/records/seen', records(RECORDS_BODY_LIMIT_KB * 1024));
          expect(atLimit.body).to.deep.equal({ data: { updated: 0 } });
          for (const [method, path, text] of [
            ['post', '/v3/records/seen', records(RECORDS_BODY_LIMIT_KB * 1024 + 1)],
            ['put', '/v3/mutes', mute],
          ] as const) {
            const res = await send(method, path, text);
            expect(res.status, path).to.equal(413);
            expect(res.body).to.deep.equal({
              status: 'error',
              code: 413000,
              message: 'request body is too large',
            });
            expectMatchesOpenApi(res, method.toUpperCase(), `/notifications${path}`);
          }
        });

        it('answers a body that is not JSON with 415', async () => {
          const res = await request(app())
            .post('/notifications/v3/records/seen')
            .set('Authorization', await bearer('u-bad'))
            .set('Content-Type', 'text/plain')
            .send('ids');
          expect(res.status).to.equal(415);
          expectMatchesOpenApi(res, 'POST', '/notifications/v3/records/seen');
        });

        it('answers a body whose Content-Encoding does not decode with 400, changing nothing', async () => {
          await seed('u-gzip', 'u-gzip-other');
          const before = await history('u-gzip', 'all');
          const res = await request(app())
            .post('/notifications/v3/records/seen')
            .set('Authorization', await bearer('u-gzip'))
            .set('Content-Type', 'application/json')
            .set('Content-Encoding', 'gzip')
            .send('definitely not gzip');
          expect(res.status).to.equal(400);
          expect(res.body).to.deep.equal({
            status: 'error',
            code: 400000,
            message: 'request body could not be decoded',
          });
          expectMatchesOpenApi(res, 'POST', '/notifications/v3/records/seen');
          expect(await history('u-gzip', 'all')).to.deep.equal(before);
        });
      });
  });

  describe('/notifications/v3/mutes', () => {
    const mutes = async (user: string) => (await call(user, 'get', '/v3/mutes')).body.data as unknown[];

    it('puts, lists, changes only the until of, and removes (by body or query) mutes of the caller', async () => {
      const put = await call('u-mute', 'put', '/v3/mutes', { targetType: 'post', targetId: 'p-1' });
      expect(put.status).to.equal(200);
      expect(put.body.data).to.deep.equal({
        targetType: 'post',
        targetId: 'p-1',
        createdAt: NOW,
        until: null,
      });
      clock = NOW + MIN;
      const again = await call('u-mute', 'put', '/v3/mutes', {
        targetType: 'post',
        targetId: 'p-1',
        until: new Date(NOW + DAY_MS).toISOString(),
      });
      expect(again.body.data).to.deep.equal({
        targetType: 'post',
        targetId: 'p-1',
        createdAt: NOW,
        until: NOW + DAY_MS,
      });
      const micro = await call('u-mute', 'put', '/v3/mutes', {
        targetType: 'post',
        targetId: 'p-1',
        until: new Date(NOW + DAY_MS + 5).toISOString().replace('Z', '999+0000'),
      });
      expect([micro.status, micro.body.data?.until]).to.deep.equal([200, NOW + DAY_MS + 5]);
      await call('u-mute', 'put', '/v3/mutes', { targetType: 'user', targetId: 'u-loud' });
      expect(await mutes('u-mute')).to.have.length(2);
      expect(await mutes('u-mute-other')).to.deep.equal([]);
      const byBody = await call('u-mute', 'delete', '/v3/mutes', { targetType: 'post', targetId: 'p-1' });
      expect(byBody.body).to.deep.equal({ data: { removed: true } });
      const byQuery = await call('u-mute', 'delete', '/v3/mutes?targetType=user&targetId=u-loud');
      expect(byQuery.body).to.deep.equal({ data: { removed: true } });
      const none = await call('u-mute', 'delete', '/v3/mutes?targetType=user&targetId=u-loud');
      expect(none.body).to.deep.equal({ data: { removed: false } });
      // Some clients send `{}` with every call: the query then names the mute.
      await call('u-mute', 'put', '/v3/mutes', { targetType: 'community', targetId: 'c-1' });
      const emptyBody = await call('u-mute', 'delete', '/v3/mutes?targetType=community&targetId=c-1', {});
      expect(emptyBody.body).to.deep.equal({ data: { removed: true } });
      expect(await mutes('u-mute')).to.deep.equal([]);
    });

    it('GET refuses a query parameter with 400 naming it', async () => {
      const res = await call('u-mute-x', 'get', '/v3/mutes?targetType=user');
      expect(res.status).to.equal(400);
      expect(res.body.message).to.equal('query: unknown parameter targetType');
    });

    it('answers PUT, and DELETE with a body, given a query parameter too with 400 naming it, changing nothing', async () => {
      await call('u-mute-q', 'put', '/v3/mutes', { targetType: 'post', targetId: 'p-1' });
      const before = await mutes('u-mute-q');
      const put = await call('u-mute-q', 'put', '/v3/mutes?until=1', { targetType: 'post', targetId: 'p-2' });
      expect(put.status).to.equal(400);
      expect(put.body.message).to.equal('query: unknown parameter until');
      // A body and a query both naming a mute: which one was meant cannot be known.
      const both = await call('u-mute-q', 'delete', '/v3/mutes?targetType=post&targetId=p-9', {
        targetType: 'post',
        targetId: 'p-1',
      });
      expect(both.status).to.equal(400);
      expect(both.body.message).to.equal('query: unknown parameter targetType, targetId');
      expect(await mutes('u-mute-q')).to.deep.equal(before);
    });

    it('names a parameter DELETE does not take as a parameter, and a field as a field', async () => {
      const byQuery = await call('u-mute-x', 'delete', '/v3/mutes?targetType=user&targetId=u-1&until=1');
      expect(byQuery.status).to.equal(400);
      expect(byQuery.body.message).to.equal('query: unknown parameter until');
      const byBody = await call('u-mute-x', 'delete', '/v3/mutes', {
        targetType: 'user',
        targetId: 'u-1',
        until: 1,
      });
      expect(byBody.status).to.equal(400);
      expect(byBody.body.message).to.equal('body: unknown field until');
    });

    // No token can name such a user (isUsableUserId): `alice\u200B` would be a mute that reads as
    // one of alice and holds back nothing of hers. A community or post id is the platform's to pick.
    it('refuses a user mute of an id no user can have with 400 naming targetId, muting nothing', async () => {
      for (const targetId of ['   ', 'alice\u200B', '\u202Eecila', 'a\u0085b']) {
        const put = await call('u-mute-odd', 'put', '/v3/mutes', { targetType: 'user', targetId });
        expect(put.status, JSON.stringify(targetId)).to.equal(400);
        expect(put.body.message).to.equal('targetId: expected a user id a token can name');
      }
      expect(await mutes('u-mute-odd')).to.deep.equal([]);
      const post = await call('u-mute-odd', 'put', '/v3/mutes', { targetType: 'post', targetId: 'p\u200B1' });
      expect(post.status, post.text).to.equal(200);
    });

    it('keeps a mute until the last millisecond of 9999 through the purge', async () => {
      const until = '9999-12-31T23:59:59.999Z';
      const put = await call('u-mute-late', 'put', '/v3/mutes', {
        targetType: 'user',
        targetId: 'u-1',
        until,
      });
      expect(put.status, put.text).to.equal(200);
      await api.storage.purgeExpired(new Date(NOW + DAY_MS));
      expect(await mutes('u-mute-late')).to.deep.equal([put.body.data]);
      expect(put.body.data.until).to.equal(Date.parse(until));
    });

    it('removes by query a caller sends with a JSON content type and an empty body', async () => {
      // Clients that set Content-Type: application/json on every call (a session default) send
      // it on a bodiless DELETE too; the body parser then reads the empty body as {}.
      await call('u-mute-empty', 'put', '/v3/mutes', { targetType: 'post', targetId: 'p-1' });
      for (const framing of [{ 'Content-Length': '0' }, { 'Transfer-Encoding': 'chunked' }]) {
        await call('u-mute-empty', 'put', '/v3/mutes', { targetType: 'post', targetId: 'p-1' });
        const res = await request(app())
          .delete('/notifications/v3/mutes?targetType=post&targetId=p-1')
          .set('Authorization', await bearer('u-mute-empty'))
          .set('Content-Type', 'application/json')
          .set(framing);
        expect([res.status, res.body], JSON.stringify(framing)).to.deep.equal([
          200,
          { data: { removed: true } },
        ]);
        expect(await mutes('u-mute-empty')).to.deep.equal([]);
      }
    });

    it("keeps an ended span for the records' retention as configured, not a fixed 90 days", async () => {
      // A record lives TRAY_RETENTION_DAYS after its lastUpdate; so must the span that held
      // back an action dated inside it, or a late delivery (a replay of stored events) of
      // that action would be counted once the span is purged.
      const retentionDays = 365;
      const yearApp = () =>
        api.app({
          now: () => clock,
          settings: { pageSize: 10, networkId: 'net1', blockApi: true, retentionDays },
        });
      const as = async (method: 'put' | 'delete', body: unknown) => {
        const agent = request(yearApp());
        const sent =
          method === 'put' ? agent.put('/notifications/v3/mutes') : agent.delete('/notifications/v3/mutes');
        return sent.set('Authorization', await bearer('u-mute-year')).send(body as object);
      };
      const target = { targetType: 'post', targetId: 'p-year' };
      expect((await as('put', target)).status).to.equal(200);
      clock = NOW + DAY_MS;
      expect((await as('delete', target)).body).to.deep.equal({ data: { removed: true } });
      const later = NOW + 101 * DAY_MS;
      await api.storage.purgeExpired(new Date(later));
      const muted = aComment(
        'u-eve',
        { postId: 'p-year', owner: 'u-mute-year' },
        {
          id: 'cm-year',
          at: NOW + DAY_MS / 2,
          userFeed: 'u-mute-year',
        },
      );
      await api.storage.writes.applyPersonal([muted], { now: later, retentionDays });
      clock = later;
      expect(await ids('u-mute-year', 'all')).to.deep.equal([]);
    });

    if (!full) return;
    const bad: [Method, unknown, RegExp][] = [
      [
        'put',
        { targetType: 'thread', targetId: 'p-1' },
        /^targetType: expected one of post, community, user/,
      ],
      ['put', { targetType: 'post', targetId: '' }, /^targetId: expected a non-empty string/],
      ['put', { targetType: 'post', targetId: 'p\u0000' }, /^targetId: expected no U\+0000 character/],
      ['delete', { targetType: 'post', targetId: '\u0000' }, /^targetId: expected no U\+0000 character/],
      ['put', { targetType: 'post', targetId: 'p-1', until: NOW }, /^until: expected a time later than now/],
      [
        'put',
        { targetType: 'post', targetId: 'p-1', until: '2027-01-16T10:00:00.123456' },
        /^until: expected an offset after the time/,
      ],
      [
        'put',
        { targetType: 'post', targetId: 'p-1', until: '2027-02-31T00:00:00Z' },
        /^until: expected a date and time that exist/,
      ],
      [
        'put',
        { targetType: 'user', targetId: 'u-1', until: 8_639_995_000_000_000 },
        /^until: expected a time no later than 9999-12-31T23:59:59.999Z/,
      ],
      ['put', { targetType: 'post' }, /^targetId: /],
      ['delete', { targetType: 'post' }, /^targetId: /],
      ['delete', { targetType: 'post', targetId: 'p-1', until: NOW + MIN }, /^body: unknown field until/],
      ['delete', undefined, /^targetType: /],
    ];
    for (const [method, body, message] of bad) {
      it(`answers ${method.toUpperCase()} ${JSON.stringify(body)} with 400 naming the problem, changing nothing`, async () => {
        const res = await call('u-mute-bad', method, '/v3/mutes', body);
        expect(res.status).to.equal(400);
        expect(res.body).to.include({ status: 'error', code: 400001 });
        expect(res.body.message).to.match(message);
        expect(await mutes('u-mute-bad')).to.deep.equal([]);
      });
    }

    it('refuses a new span of a target muted anew 100 times within the retention with 400 (code 400004), changing nothing', async function () {
      this.timeout(60_000);
      const inbox = api.storage.inbox!;
      const target = { targetType: 'post', targetId: 'p-loop' } as const;
      for (let i = 0; i < MAX_MUTE_SPANS_PER_TARGET; i += 1) {
        await inbox.putMute('u-looping', target, null, NOW - 1_000 + 2 * i, 90, MAX_MUTES_IN_FORCE);
        await inbox.removeMute('u-looping', target, NOW - 999 + 2 * i, 90);
      }
      const refused = await call('u-looping', 'put', '/v3/mutes', target);
      expect(refused.status).to.equal(400);
      expect(refused.body).to.include({ status: 'error', code: 400004 });
      expect(refused.body.message).to.match(
        /muted anew 100 times within 90 days \(the records' retention\) of now/,
      );
      expect(await mutes('u-looping')).to.deep.equal([]);
      // Another target is another count.
      expect(
        (await call('u-looping', 'put', '/v3/mutes', { ...target, targetId: 'p-other' })).status,
      ).to.equal(200);
    });

    it('refuses a new span of a user who started 10,000 within the retention with 400 (code 400004), changing nothing', async function () {
      this.timeout(120_000);
      const inbox = api.storage.inbox!;
      // Each muted for a millisecond, one after another: ended at once, kept (and counted) for the
      // retention, never more than one in force.
      const mutedAt = (n: number) => NOW - 50_000 + 2 * n;
      for (let start = 0; start < MAX_MUTE_SPANS_PER_USER; start += 50)
        await Promise.all(
          Array.from({ length: 50 }, (_, offset) =>
            inbox.putMute(
              'u-fleeting',
              { targetType: 'post', targetId: `p-${start + offset}` },
              mutedAt(start + offset) + 1,
              mutedAt(start + offset),
              90,
              MAX_MUTES_IN_FORCE,
            ),
          ),
        );
      const refused = await call('u-fleeting', 'put', '/v3/mutes', { targetType: 'post', targetId: 'p-new' });
      expect(refused.status).to.equal(400);
      expect(refused.body).to.include({ status: 'error', code: 400004 });
      expect(refused.body.message).to.match(
        /this user started 10000 mutes within 90 days \(the records' retention\) of now/,
      );
      expect(await mutes('u-fleeting')).to.deep.equal([]);
      // Another user is another count.
      expect(
        (await call('u-other', 'put', '/v3/mutes', { targetType: 'post', targetId: 'p-new' })).status,
      ).to.equal(200);
    });

    it('refuses a new mute beyond 1,000 in force with 400 (code 400003), but not a second PUT of one in force', async function () {
      this.timeout(120_000);
      const inbox = api.storage.inbox!;
      for (let i = 0; i < 1_000; i += 1)
        await inbox.putMute(
          'u-many',
          { targetType: 'post', targetId: `p-${i}` },
          null,
          NOW - 1,
          90,
          MAX_MUTES_IN_FORCE,
        );
      const refused = await call('u-many', 'put', '/v3/mutes', { targetType: 'post', targetId: 'p-new' });
      expect(refused.status).to.equal(400);
      expect(refused.body).to.include({ status: 'error', code: 400003 });
      expect(refused.body.message).to.match(/at most 1000 mutes/);
      const again = await call('u-many', 'put', '/v3/mutes', {
        targetType: 'post',
        targetId: 'p-7',
        until: NOW + MIN,
      });
      expect(again.status).to.equal(200);
      expect(await mutes('u-many')).to.have.length(1_000);
    });
  });

  // docs/tray-rules.md#deleted-users: a token outlives the deletion until it expires.
  describe("a deleted user's token", () => {
    it('is answered 410 (code 410001) on a PUT of a mute and on v2/last-read, storing neither', async () => {
      await api.storage.writes.applyProfiles(
        [{ userId: 'u-gone', displayName: 'Deleted user', deleted: true, at: NOW - MIN }],
        { now: NOW, retentionDays: 90 },
      );
      for (const [method, path, body] of [
        ['put', '/v3/mutes', { targetType: 'post', targetId: 'p-1' }],
        ['post', '/v2/last-read', undefined],
      ] as const) {
        const res = await call('u-gone', method, path, body);
        expect(res.status, path).to.equal(410);
        expect(res.body).to.deep.equal({
          status: 'error',
          code: 410001,
          message: 'this user was deleted: the tray keeps nothing more of theirs',
        });
      }
      expect((await call('u-gone', 'get', '/v3/mutes')).body.data).to.deep.equal([]);
      expect(await api.storage.lastRead.latest('u-gone')).to.equal(0);
      // Reads still answer, empty: nothing is delivered to a deleted user.
      expect((await call('u-gone', 'get', '/v3')).body.data).to.include({ totalUnreadCount: 0 });
    });
  });
}

describe('inbox endpoints (docs/tray-api.md#the-inbox)', function () {
  this.timeout(30_000);
  inboxSuite();
});

describe('inbox endpoints on the MongoDB adapter (a smoke test; its behaviour is in the conformance suite)', function () {
  this.timeout(60_000);
  inboxSuite('mongodb');
});

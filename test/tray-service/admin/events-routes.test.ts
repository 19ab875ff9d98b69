import type { EventsPort } from '../../../tray-service/storage/port.ts';
import { StorageBusyError } from '../../../tray-service/storage/storage-busy-error.ts';
import { expect } from 'chai';
import type { Express } from 'express';
import { connect, type AddressInfo } from 'node:net';
import request from 'supertest';
import { closeServer, listen } from '../../../shared/http/listen.ts';
import { DAY_MS } from '../../../shared/time/durations.ts';
import { recordingLogger } from '../../support/recording-logger.ts';
import { readRepositoryFile } from '../../support/repository-files.ts';
import { testStack } from '../../support/test-stack.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import {
  ADMIN_TOKEN,
  adminApp,
  adminJwt,
  eventDoc,
  expiresAtOf,
  storeEvents,
  userToken,
  sessionCookie,
  type SeedEvent,
} from './admin-fixtures.ts';
import { banEvent } from '../bans/ban-events.ts';
import { leaveDuringLookup } from './leave-during-lookup.ts';
import { stalledGet } from './stalled-reader.ts';

const t = (iso: string) => new Date(iso);
const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
/** A cursor as a client could craft one: base64url JSON. */
const crafted = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('admin events API', () => {
  const suite = useTrayStorage();
  let app: Express;
  let close: () => void;
  const docs: SeedEvent[] = [
    eventDoc({ key: 'e1', event: 'post.didCreate', webhook: 'main', receivedAt: t('2026-11-20T10:00:00Z') }),
    eventDoc({
      key: 'e2',
      event: 'comment.didCreate',
      webhook: 'main',
      receivedAt: t('2026-11-20T11:00:00Z'),
    }),
    eventDoc({
      key: 'e3',
      event: 'post.didCreate',
      webhook: 'backup',
      receivedAt: t('2026-11-20T12:00:00Z'),
      // Not a webhook of the platform's (TRAY_PLATFORM_WEBHOOKS): stored, never applied.
      status: 'foreign',
    }),
    // Same millisecond as e3: the key decides the order.
    eventDoc({
      key: 'e4',
      event: 'follow.didCreate',
      webhook: 'main',
      receivedAt: t('2026-11-20T12:00:00Z'),
      status: 'unknown',
    }),
    eventDoc({
      key: 'e5',
      event: 'post.didCreate',
      webhook: 'main',
      receivedAt: t('2026-11-20T13:00:00Z'),
      status: 'applied',
    }),
    eventDoc({
      key: 'expired',
      event: 'post.didCreate',
      receivedAt: t('2026-11-20T14:00:00Z'),
      expired: true,
    }),
  ];

  before(async () => {
    await storeEvents(suite.storage, docs);
    ({ app, close } = adminApp(suite.storage, { maxLimit: 3 }));
  });
  after(() => close());

  const keys = (body: { items: { key: string }[] }) => body.items.map((item) => item.key);
  const list = (query: string) => request(app).get(`/admin/events${query}`).set(admin);
  /** Every event's key, following the list's cursors `limit` at a time. */
  const walk = async (limit: number) => {
    const seen: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const res: request.Response = await list(`?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`).expect(
        200,
      );
      seen.push(...keys(res.body));
      cursor = res.body.nextCursor as string | null;
    }
    return seen;
  };

  describe('authentication (every admin route)', () => {
    for (const path of [
      '/admin/events',
      '/admin/events/e1',
      '/admin/events/export',
      '/admin/moderation/decisions',
    ]) {
      describe(`GET ${path}`, () => {
        it('responds 401 without a token', async () => {
          const res = await request(app).get(path).expect(401);
          expect(res.body).to.deep.equal({ status: 'error', code: 401000, message: 'missing bearer token' });
        });
        it('responds 401 with a wrong admin token', async () => {
          await request(app).get(path).set('Authorization', `Bearer ${ADMIN_TOKEN}x`).expect(401);
        });
        it('responds 401 to a user token, even one whose role claim says admin', async () => {
          for (const role of ['member', 'admin', ['member', 'admin']]) {
            const res = await request(app)
              .get(path)
              .set('Authorization', `Bearer ${await userToken('u-root', { role })}`)
              .expect(401);
            expect(res.body.code).to.equal(401000);
          }
        });
        it('admits an admin JWT (admin audience and issuer)', async () => {
          await request(app)
            .get(path)
            .set('Authorization', `Bearer ${await adminJwt('ops-ana')}`)
            .expect(200);
        });
      });
    }
    it('keeps every answer out of caches: payloads must not stay in a browser after sign-out', async () => {
      for (const path of [
        '/admin/events',
        '/admin/events/e1',
        '/admin/events/e1/recipients',
        '/admin/events/export?format=csv',
        '/admin/moderation/decisions',
        '/admin/stats/events-per-minute',
      ]) {
        const res = await request(app).get(path).set(admin);
        expect(res.status, path).to.equal(200);
        expect(res.headers['cache-control'], path).to.equal('no-store');
      }
    });
    it('responds 401 to an admin JWT that has expired', async () => {
      const expired = await adminJwt('ops-ana', Math.floor(Date.now() / 1000) - 60);
      await request(app).get('/admin/events').set('Authorization', `Bearer ${expired}`).expect(401);
    });
    it('responds 401 to an admin JWT when admin JWTs are not configured (ADMIN_TOKEN only)', async () => {
      const tokenOnly = adminApp(suite.storage, { adminJwts: false });
      try {
        const res = await request(tokenOnly.app)
          .get('/admin/events')
          .set('Authorization', `Bearer ${await adminJwt('ops-ana')}`);
        expect(res.status).to.equal(401);
        await request(tokenOnly.app).get('/admin/events').set(admin).expect(200);
      } finally {
        tokenOnly.close();
      }
    });
    it('responds 401 to a token that is not a valid JWT', async () => {
      await request(app).get('/admin/events').set('Authorization', 'Bearer not.a.jwt').expect(401);
    });
  });

  describe('GET /admin/events', () => {
    it('lists unexpired events newest first, ties broken by key, with a cursor for the next page', async () => {
      const first = await list('').expect(200);
      expect(keys(first.body)).to.deep.equal(['e5', 'e4', 'e3']);
      expect(first.body.nextCursor).to.be.a('string');
      const second = await list(`?cursor=${first.body.nextCursor}`).expect(200);
      expect(keys(second.body)).to.deep.equal(['e2', 'e1']);
      expect(second.body.nextCursor).to.equal(null);
    });

    it('shows the stored fields, with the dedupe key as `key`', async () => {
      const res = await list('?limit=1').expect(200);
      const e5 = docs[4]!;
      expect(res.body.items[0]).to.deep.equal({
        key: 'e5',
        event: 'post.didCreate',
        webhook: 'main',
        status: 'applied',
        receivedAt: '2026-11-20T13:00:00.000Z',
        storedAt: e5.storedAt.toISOString(),
        expiresAt: expiresAtOf(e5),
        data: e5.data,
      });
    });

    it('pages one at a time through every event exactly once', async () => {
      expect(await walk(1)).to.deep.equal(['e5', 'e4', 'e3', 'e2', 'e1']);
    });

    // A page of `limit` megabyte payloads (ADMIN_LIST_MAX_LIMIT up to 10,000) was read whole and
    // answered as one string; the export's pages were bounded by bytes, the list's were not.
    it('holds no more events than their payloads fit in the page bytes (one at least), and the cursor goes on', async () => {
      const small = adminApp(suite.storage, { maxLimit: 3, deps: { eventsPageBytes: 1 } });
      try {
        const first = await request(small.app).get('/admin/events?limit=3').set(admin).expect(200);
        expect(keys(first.body)).to.deep.equal(['e5']);
        const second = await request(small.app)
          .get(`/admin/events?limit=3&cursor=${first.body.nextCursor}`)
          .set(admin)
          .expect(200);
        expect(keys(second.body)).to.deep.equal(['e4']);
      } finally {
        small.close();
      }
    });

    // A cursor is a position in one filter's order: another filter paged on from there, its newer
    // events (here e4, after e3 in the order) skipped without a word.
    it('refuses a cursor sent with another filter than the one it was made for, naming the problem', async () => {
      const posts = await list('?event=post.didCreate&limit=2').expect(200);
      expect(keys(posts.body)).to.deep.equal(['e5', 'e3']);
      const cursor = posts.body.nextCursor as string;
      for (const other of ['?event=follow.didCreate&', '?', '?event=post.didCreate&webhook=main&']) {
        const res = await list(`${other}cursor=${cursor}`).expect(400);
        expect(res.body, other).to.deep.equal({
          status: 'error',
          code: 400001,
          message:
            'cursor: made for another filter; send the filter of the page that handed it out, or leave cursor out to start again',
        });
      }
      // The filter's values, not how they are written: the limit may change, a time be spelt
      // another way.
      const dated = await list('?since=2026-11-20&limit=2').expect(200);
      const more = await list(
        `?since=2026-11-20T00:00:00.000%2B00:00&limit=3&cursor=${dated.body.nextCursor}`,
      ).expect(200);
      expect(keys(more.body)).to.deep.equal(['e3', 'e2', 'e1']);
      const same = await list(`?limit=1&event=post.didCreate&cursor=${cursor}`).expect(200);
      expect(keys(same.body)).to.deep.equal(['e1']);
    });

    describe('filters', () => {
      const cases: [string, string[]][] = [
        ['?event=post.didCreate', ['e5', 'e3', 'e1']],
        ['?webhook=backup', ['e3']],
        ['?status=unknown', ['e4']],
        ['?status=foreign', ['e3']],
        ['?since=2026-11-20T12:00:00Z', ['e5', 'e4', 'e3']],
        ['?until=2026-11-20T12:00:00Z', ['e2', 'e1']],
        ['?since=2026-11-20T11:00:00Z&until=2026-11-20T13:00:00Z', ['e4', 'e3', 'e2']],
        ['?event=post.didCreate&webhook=main', ['e5', 'e1']],
        ['?event=post.didCreate&since=2026-11-20T10:30:00%2B00:00', ['e5', 'e3']],
        // No offset: UTC, whatever the server's time zone.
        ['?since=2026-11-20T12:00&until=2026-11-20T13:00', ['e4', 'e3']],
        ['?event=no.such', []],
      ];
      for (const [query, expected] of cases) {
        it(`${query} returns ${expected.join(', ') || 'nothing'}`, async () => {
          const res = await list(`${query}${query ? '&' : '?'}limit=3`).expect(200);
          const all = [...keys(res.body)];
          let cursor = res.body.nextCursor as string | null;
          while (cursor) {
            const more = await list(`${query}&limit=3&cursor=${cursor}`).expect(200);
            all.push(...keys(more.body));
            cursor = more.body.nextCursor;
          }
          expect(all).to.deep.equal(expected);
        });
      }
    });

    describe('with invalid parameters', () => {
      const cases: [string, string][] = [
        ['?limit=4', 'limit: expected a whole number from 1 to 3'],
        ['?limit=0', 'limit: expected a whole number from 1 to 3'],
        ['?limit=abc', 'limit: expected a whole number from 1 to 3'],
        // Digits only: Number() would read these as 2, 1, 2, 2 and 2.
        ['?limit=0x2', 'limit: expected a whole number from 1 to 3'],
        ['?limit=1e0', 'limit: expected a whole number from 1 to 3'],
        ['?limit=2.0', 'limit: expected a whole number from 1 to 3'],
        ['?limit=%2B2', 'limit: expected a whole number from 1 to 3'],
        ['?limit=%202%20', 'limit: expected a whole number from 1 to 3'],
        ['?limit=2&limit=3', 'limit: expected a whole number from 1 to 3'],
        ['?since=yesterday', 'since: expected an ISO 8601 time'],
        ['?until=2026-13-45', 'until: expected an ISO 8601 time'],
        // A day that does not exist is refused, not rolled over to March 2.
        ['?since=2026-02-30', 'since: expected an ISO 8601 time'],
        ['?since=2026-11-21&until=2026-11-20', 'until: must be later than since'],
        // Every time an answer may repeat (a replay's filter) is one RFC 3339 and epoch ms can write.
        ['?since=0000-01-01', 'since: expected a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z'],
        [
          '?until=9999-12-31T23:59:59-23:59',
          'until: expected a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z',
        ],
        ['?status=deleted', 'status: expected applied, stored, unknown, invalid or foreign'],
        ['?cursor=garbage', 'cursor: not a cursor this API returned'],
        // Times no Date holds or PostgreSQL cannot compare with would fail the query.
        [`?cursor=${crafted({ t: 9e15, k: 'x' })}`, 'cursor: not a cursor this API returned'],
        [`?cursor=${crafted({ t: -9e14, k: 'x' })}`, 'cursor: not a cursor this API returned'],
        // A position made by hand: no list, no filter.
        [
          `?cursor=${crafted({ t: Date.parse('2026-11-20T12:00:00Z'), k: 'e3' })}`,
          'cursor: not a cursor this API returned',
        ],
        // PostgreSQL's text cannot hold U+0000, and no stored value does.
        ['?userId=a%00', 'userId: expected no U+0000 character and no lone surrogate'],
        ['?event=post%00', 'event: expected no U+0000 character and no lone surrogate'],
        ['?evnt=post.didCreate', 'evnt: unknown query parameter'],
        ['?event=a&event=b', 'event: expected an event name such as post.didCreate'],
      ];
      for (const [query, message] of cases) {
        it(`${query} responds 400 naming the field`, async () => {
          const res = await list(query).expect(400);
          expect(res.body).to.deep.equal({ status: 'error', code: 400001, message });
        });
      }
    });
  });

  describe('GET /admin/events/:key', () => {
    it('returns the stored event', async () => {
      const res = await request(app).get('/admin/events/e2').set(admin).expect(200);
      expect(res.body).to.include({ key: 'e2', event: 'comment.didCreate', webhook: 'main' });
    });
    it('shows a foreign event as the tray took it: nothing applied, no recipient, no ban', async () => {
      // Another sender's comment and ban, stored as foreign: no tray took either (docs/receiver.md).
      const comment = JSON.parse(readRepositoryFile('examples/events/comment.json')) as SeedEvent;
      const ban = banEvent('ban', ['u-ana'], '2026-11-20T10:06:00.000Z');
      const foreign = [
        eventDoc({ key: 'foreign-comment', event: comment.event, data: comment.data, status: 'foreign' }),
        eventDoc({ key: 'foreign-ban', event: ban.event, data: ban.data, status: 'foreign' }),
      ];
      await storeEvents(suite.storage, foreign);
      for (const { key } of foreign) {
        const detail = (await request(app).get(`/admin/events/${key}`).set(admin).expect(200)).body;
        expect(detail, key).to.include({ status: 'foreign' });
        expect(
          [detail.activities, detail.memberships, detail.profiles, detail.bans, detail.recipients],
          key,
        ).to.deep.equal([[], [], [], [], { users: [], total: 0 }]);
        const page = (await request(app).get(`/admin/events/${key}/recipients`).set(admin).expect(200)).body;
        expect(page.items, key).to.deep.equal([]);
      }
    });
    it('responds 404 for an unknown key', async () => {
      const res = await request(app).get('/admin/events/nope').set(admin).expect(404);
      expect(res.body.code).to.equal(404000);
    });
    it('responds 404 for an expired event', async () => {
      await request(app).get('/admin/events/expired').set(admin).expect(404);
    });
    // No stored key holds U+0000 (each engine stores it replaced): one asked with it is not found,
    // on every engine, and not an error of the statement.
    for (const path of [
      '/admin/events/a%00b',
      '/admin/events/a%00b/recipients',
      '/admin/events/a%00b/tray-changes',
    ])
      it(`responds 404 for a key holding U+0000 (${path})`, async () => {
        const res = await request(app).get(path).set(admin).expect(404);
        expect(res.body.code).to.equal(404000);
      });
    it('responds 400 for a key whose percent-encoding does not decode', async () => {
      const res = await request(app).get('/admin/events/%E0%A4%A').set(admin).expect(400);
      expect(res.body).to.deep.equal({ status: 'error', code: 400000, message: 'malformed URL encoding' });
    });
  });

  describe('GET /admin/events/export', () => {
    it('streams every matching event as NDJSON, newest first, without paging limits', async () => {
      const res = await request(app).get('/admin/events/export?event=post.didCreate').set(admin).expect(200);
      expect(res.headers['content-type']).to.match(/^application\/x-ndjson/);
      const lines = res.text.split('\n');
      expect(lines.pop()).to.equal('');
      expect(lines.map((line) => (JSON.parse(line) as { key: string }).key)).to.deep.equal([
        'e5',
        'e3',
        'e1',
      ]);
    });
    it('streams more events than a page holds: every event the list pages through (page limit 3)', async () => {
      const listed = await walk(3);
      expect(listed.length, 'events stored').to.be.above(3);
      const res = await request(app).get('/admin/events/export').set(admin).expect(200);
      const exported = res.text
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { key: string }).key);
      expect(exported).to.deep.equal(listed);
    });
    it('applies since/until like the list', async () => {
      const res = await request(app)
        .get('/admin/events/export?since=2026-11-20T11:00:00Z&until=2026-11-20T13:00:00Z')
        .set(admin)
        .expect(200);
      expect(res.text.trim().split('\n')).to.have.lengthOf(3);
    });
    it('responds 400 naming a bad filter before streaming anything', async () => {
      const res = await request(app).get('/admin/events/export?since=nope').set(admin).expect(400);
      expect(res.body.message).to.equal('since: expected an ISO 8601 time');
    });
    it('answers an empty body when nothing matches', async () => {
      const res = await request(app).get('/admin/events/export?webhook=none').set(admin).expect(200);
      expect(res.text).to.equal('');
    });

    describe('resumed after the last event received (?after=)', () => {
      const exported = async (query: string) => {
        const res = await request(app).get(`/admin/events/export?${query}`).set(admin).expect(200);
        return res.text === ''
          ? []
          : res.text
              .trim()
              .split('\n')
              .map((line) => (JSON.parse(line) as { key: string }).key);
      };

      it('sends the rest in the same order, from any line, across events of the same millisecond', async () => {
        const whole = await exported('');
        // e4 and e3 were received in the same millisecond.
        expect(whole.filter((key) => /^e[1-5]$/.test(key))).to.deep.equal(['e5', 'e4', 'e3', 'e2', 'e1']);
        for (const [index, key] of whole.entries())
          expect(await exported(`after=${key}`), `after ${key}`).to.deep.equal(whole.slice(index + 1));
      });

      it('keeps the filters, and the key may be of an event they leave out', async () => {
        expect(await exported('event=post.didCreate&after=e5')).to.deep.equal(['e3', 'e1']);
        expect(await exported('event=post.didCreate&after=e4')).to.deep.equal(['e3', 'e1']);
        expect(await exported('event=post.didCreate&until=2026-11-20T11:30:00Z&after=e3')).to.deep.equal([
          'e1',
        ]);
      });

      it('continues a CSV file without its header line', async () => {
        const whole = await request(app).get('/admin/events/export?format=csv').set(admin).expect(200);
        const resumed = await request(app)
          .get('/admin/events/export?format=csv&after=e4')
          .set(admin)
          .expect(200);
        const [header, ...rows] = whole.text.split('\r\n');
        expect(header).to.match(/^key,event,/);
        expect(resumed.text.split('\r\n')).to.deep.equal(rows.slice(2));
      });

      it('counts in the check what the export would send', async () => {
        const rows = async (query: string) =>
          (
            (await request(app).get(`/admin/events/export/check?${query}`).set(admin).expect(200)).body as {
              rows: number;
            }
          ).rows;
        const queries = [
          '',
          'event=post.didCreate',
          'since=2026-11-20T12:00:00Z',
          'until=2026-11-20T12:00:00Z',
        ];
        for (const filter of queries)
          for (const key of await exported(filter)) {
            const query = `${filter}&after=${key}`;
            expect(await rows(query), query).to.equal((await exported(query)).length);
          }
        expect(await rows('after=e4')).to.be.above(0);
      });

      for (const key of ['nope', 'expired'])
        it(`responds 400 naming after for a key no unexpired event has (${key}), sending nothing`, async () => {
          const res = await request(app).get(`/admin/events/export?after=${key}`).set(admin).expect(400);
          expect(res.body.message).to.equal(
            'after: no stored event has this key (expired, or never stored); start the export again',
          );
        });
    });
  });

  describe('GET /admin/events/export/check', () => {
    it('answers how many events the export would send, sending none', async () => {
      const res = await request(app)
        .get('/admin/events/export/check?event=post.didCreate&format=csv')
        .set(admin)
        .expect(200);
      expect(res.body).to.deep.equal({ rows: 3 });
    });
    it('refuses what the export refuses, with its message', async () => {
      for (const query of ['since=nope', 'format=xml', 'page=2']) {
        const check = await request(app).get(`/admin/events/export/check?${query}`).set(admin).expect(400);
        const exported = await request(app).get(`/admin/events/export?${query}`).set(admin).expect(400);
        expect(check.body, query).to.deep.equal(exported.body);
      }
    });
  });

  describe('export caps', () => {
    it('refuses a filter matching more rows than ADMIN_EXPORT_MAX_ROWS before sending any, naming the cap', async () => {
      const capped = adminApp(suite.storage, { deps: { exportMaxRows: 2 } });
      try {
        const res = await request(capped.app).get('/admin/events/export').set(admin).expect(400);
        expect(res.body.code).to.equal(400001);
        expect(res.body.message).to.match(/^filter: matches more than 2 events, at most 2 per export/);
        const check = await request(capped.app).get('/admin/events/export/check').set(admin).expect(400);
        expect(check.body).to.deep.equal(res.body);
        await request(capped.app).get('/admin/events/export?webhook=none').set(admin).expect(200);
      } finally {
        capped.close();
      }
    });

    it('refuses an export over ADMIN_EXPORTS_MAX running at once with 429 (code 429002)', async () => {
      // The first export's read waits here until the test lets it go on.
      let entered: () => void = () => undefined;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      let letGo: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (letGo = resolve));
      const events = suite.storage.events;
      const gated = eventsWith(events, {
        stream: async function* (filter) {
          entered();
          await gate;
          yield* events.stream(filter);
        },
      });
      const capped = adminApp(suite.storage, { deps: { exportsMax: 1, events: gated } });
      try {
        const first = request(capped.app)
          .get('/admin/events/export')
          .set(admin)
          .then((res) => res);
        await inside;
        const refused = await request(capped.app).get('/admin/events/export').set(admin).expect(429);
        expect(refused.body.code).to.equal(429002);
        expect(refused.headers['retry-after']).to.match(/^\d+$/);
        const check = await request(capped.app).get('/admin/events/export/check').set(admin).expect(429);
        expect(check.body).to.deep.equal(refused.body);
        letGo();
        expect((await first).status).to.equal(200);
        await request(capped.app).get('/admin/events/export').set(admin).expect(200);
      } finally {
        letGo();
        capped.close();
      }
    });

    // The status and headers went before the first read: a storage failing there (after the
    // count passed) cut the response with no status and no error to show.
    it('answers a storage failure of its first read with 503 and the error, not a cut download', async () => {
      const failing = eventsWith(suite.storage.events, {
        stream: () => ({
          [Symbol.asyncIterator]: () => ({
            next: async () => {
              throw new StorageBusyError('the database kept this read waiting');
            },
          }),
        }),
      });
      const broken = adminApp(suite.storage, { deps: { events: failing } });
      try {
        const res = await request(broken.app).get('/admin/events/export').set(admin).expect(503);
        expect(res.body.code).to.equal(503000);
        expect(res.headers['content-disposition']).to.equal(undefined);
      } finally {
        broken.close();
      }
    });

    // An export carries every payload, as a tail does: it lasts no longer than its credential.
    it('ends an export whose session signs out while it runs, at the next credential check', async () => {
      const endless = endlessEvents(suite.storage.events);
      const watched = adminApp(suite.storage, {
        deps: { exportIdleMs: 60_000, tailHeartbeatMs: 200, events: endless },
      });
      const server = await listen(watched.app, { port: 0, host: '127.0.0.1' });
      const port = (server.address() as AddressInfo).port;
      const base = `http://127.0.0.1:${port}`;
      try {
        const cookie = await sessionCookie(base, ADMIN_TOKEN);
        const reader = await stalledGet(port, '/admin/events/export?webhook=endless', `Cookie: ${cookie}`);
        expect(reader.status).to.equal('HTTP/1.1 200 OK');
        await request(base).post('/admin/logout').set('Cookie', cookie).expect(303);
        const ended = await Promise.race([
          reader.readToEnd().then(() => 'ended'),
          new Promise((resolve) => setTimeout(() => resolve('still sending'), 5_000)),
        ]);
        expect(ended).to.equal('ended');
      } finally {
        await closeServer(server, 100);
        watched.close();
      }
    });

    it('gives the slot of an export whose reader stopped reading back once it took nothing for the idle timeout', async () => {
      const endless = endlessEvents(suite.storage.events);
      const capped = adminApp(suite.storage, {
        deps: { exportsMax: 1, exportIdleMs: 200, events: endless },
      });
      const server = await listen(capped.app, { port: 0, host: '127.0.0.1' });
      const port = (server.address() as AddressInfo).port;
      const exportStatus = async () =>
        (await fetch(`http://127.0.0.1:${port}/admin/events/export?webhook=none`, { headers: admin })).status;
      try {
        const reader = await stalledGet(port, '/admin/events/export?webhook=endless');
        expect(reader.status).to.equal('HTTP/1.1 200 OK');
        expect(await exportStatus()).to.equal(429);
        // Cut off within the timeout and its check (a quarter of it); 5 s leave a loaded machine room.
        const until = Date.now() + 5_000;
        let status = await exportStatus();
        while (status === 429 && Date.now() < until) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          status = await exportStatus();
        }
        expect(status, 'an export 5 s after its reader stalled').to.equal(200);
        // Its reader gets the bytes the sockets held, then the end: a download cut short.
        expect(await reader.readToEnd()).to.be.above(0);
      } finally {
        await closeServer(server, 100);
        capped.close();
      }
    });

    it('answers HEAD with the headers of the export, reading no event', async () => {
      const events = suite.storage.events;
      let read = 0;
      const counted = eventsWith(events, {
        stream: async function* (filter) {
          for await (const event of events.stream(filter)) {
            read += 1;
            yield event;
          }
        },
      });
      const capped = adminApp(suite.storage, { deps: { exportsMax: 1, events: counted } });
      try {
        const head = await request(capped.app).head('/admin/events/export?format=csv').set(admin).expect(200);
        expect(head.headers['content-type']).to.match(/^text\/csv/);
        expect(read, 'events read for a HEAD').to.equal(0);
        // Its slot is free again.
        await request(capped.app).get('/admin/events/export').set(admin).expect(200);
        expect(read).to.be.above(0);
      } finally {
        capped.close();
      }
    });

    it('watches no credential for an export whose client left while its rows were counted', async () => {
      const events = suite.storage.events;
      let counting: (() => void) | undefined;
      const counted = new Promise<void>((resolve) => (counting = resolve));
      const slowCount = eventsWith(events, {
        count: async (filter) => {
          counting?.();
          // The client leaves meanwhile: the route goes on with a response already closed.
          await new Promise((resolve) => setTimeout(resolve, 300));
          return events.count(filter);
        },
      });
      const { logger, messages } = recordingLogger();
      const capped = adminApp(suite.storage, { deps: { events: slowCount, tailHeartbeatMs: 50, logger } });
      const server = await listen(capped.app, { port: 0, host: '127.0.0.1' });
      const port = (server.address() as AddressInfo).port;
      try {
        const cookie = await sessionCookie(capped.app);
        const socket = connect(port, '127.0.0.1');
        socket.on('error', () => undefined);
        await new Promise((resolve) => socket.once('connect', resolve));
        socket.write(`GET /admin/events/export HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${cookie}\r\n\r\n`);
        await counted;
        socket.destroy();
        await new Promise((resolve) => setTimeout(resolve, 500));
        // Signed out: a credential watch left running on the gone export would now end it, again
        // at every check, for as long as the process runs.
        await request(capped.app).post('/admin/logout').set('Cookie', cookie).expect(303);
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(messages.filter((message) => message.includes('credential ended'))).to.deep.equal([]);
      } finally {
        await closeServer(server, 100);
        capped.close();
      }
    });

    // The slot bounds the counts as well as the reads: a client that leaves while its rows are
    // counted must not free it for another count while its own still runs in the database.
    it('holds the slot of a client that left while its rows were counted until the count ends', async () => {
      const events = suite.storage.events;
      // The first count after `hold` waits for `release`; any other runs at once.
      let held: { entered: () => void; gate: Promise<void> } | undefined;
      let counts = 0;
      const heldCount = eventsWith(events, {
        count: async (filter) => {
          counts += 1;
          const mine = held;
          held = undefined;
          if (mine) {
            mine.entered();
            await mine.gate;
          }
          return events.count(filter);
        },
      });
      const capped = adminApp(suite.storage, { deps: { exportsMax: 1, events: heldCount } });
      const server = await listen(capped.app, { port: 0, host: '127.0.0.1' });
      const port = (server.address() as AddressInfo).port;
      let release: () => void = () => undefined;
      try {
        for (const path of ['/admin/events/export/check', '/admin/events/export']) {
          counts = 0;
          let entered: () => void = () => undefined;
          const inCount = new Promise<void>((resolve) => (entered = resolve));
          held = { entered, gate: new Promise<void>((resolve) => (release = resolve)) };
          const socket = connect(port, '127.0.0.1');
          socket.on('error', () => undefined);
          await new Promise((resolve) => socket.once('connect', resolve));
          socket.write(
            `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${admin.Authorization}\r\n\r\n`,
          );
          await inCount;
          socket.destroy();
          await new Promise((resolve) => setTimeout(resolve, 200));
          const refused = await request(capped.app).get('/admin/events/export/check').set(admin);
          expect(refused.status, `while the count of a client gone from ${path} runs`).to.equal(429);
          expect(counts, 'counts started').to.equal(1);
          release();
          await new Promise((resolve) => setTimeout(resolve, 200));
          await request(capped.app).get('/admin/events/export/check').set(admin).expect(200);
        }
      } finally {
        release();
        await closeServer(server, 100);
        capped.close();
      }
    });

    it('gives the slot back when the client left while its session was looked up, before the route ran', async () => {
      const capped = adminApp(suite.storage, { deps: { exportsMax: 1 } });
      const server = await listen(capped.app, { port: 0, host: '127.0.0.1' });
      const port = (server.address() as AddressInfo).port;
      try {
        const cookie = await sessionCookie(capped.app);
        for (const path of ['/admin/events/export/check', '/admin/events/export']) {
          await leaveDuringLookup(port, path, cookie, testStack().redisUrl);
          const next = await request(capped.app).get('/admin/events/export/check').set(admin);
          expect(next.status, `after a client left ${path}: ${JSON.stringify(next.body)}`).to.equal(200);
        }
      } finally {
        await closeServer(server, 100);
        capped.close();
      }
    });
  });
});

describe('admin events API after EVENTS_RETENTION_DAYS changes', () => {
  const suite = useTrayStorage();
  let app: Express;
  let close: () => void;
  const receivedAt = new Date(Date.now() - 3 * DAY_MS);
  /** Stored while EVENTS_RETENTION_DAYS was 30: storage keeps it (and purges it) until then. */
  const storedExpiry = new Date(receivedAt.getTime() + 30 * DAY_MS).toISOString();

  before(async () => {
    await suite.storage.events.store(
      { key: 'kept-30-days', event: 'post.didCreate', data: {}, webhook: 'retention', receivedAt },
      { status: 'stored' },
      { retentionDays: 30, now: receivedAt },
    );
    // The admin tests' EVENTS_RETENTION_DAYS differs (as after an operator changed it): what was
    // stored keeps its expiry.
    ({ app, close } = adminApp(suite.storage));
  });
  after(() => close());

  it('shows the expiry storage holds in the list, the detail and both exports', async () => {
    const listed = await request(app).get('/admin/events?webhook=retention').set(admin).expect(200);
    expect(listed.body.items.map((item: { expiresAt: string }) => item.expiresAt)).to.deep.equal([
      storedExpiry,
    ]);
    const detail = await request(app).get('/admin/events/kept-30-days').set(admin).expect(200);
    expect(detail.body.expiresAt).to.equal(storedExpiry);
    const ndjson = await request(app).get('/admin/events/export?webhook=retention').set(admin).expect(200);
    expect(JSON.parse(ndjson.text.trim()).expiresAt).to.equal(storedExpiry);
    const csv = await request(app)
      .get('/admin/events/export?webhook=retention&format=csv')
      .set(admin)
      .expect(200);
    expect(csv.text).to.include(`,${storedExpiry},`);
  });
});

/** The events, with webhook=endless streaming 64 KB events without end, as fast as a reader takes them. */
function endlessEvents(events: EventsPort): EventsPort {
  const payload = 'x'.repeat(64 * 1024);
  return eventsWith(events, {
    stream: async function* (filter) {
      if (filter.webhook !== 'endless') return yield* events.stream(filter);
      for (let n = 0; ; n += 1) yield eventDoc({ key: `endless-${n}`, data: { payload } });
    },
  });
}

/** The stored events, with some of their operations replaced. */
function eventsWith(events: EventsPort, replaced: Partial<EventsPort>): EventsPort {
  return {
    store: (...args) => events.store(...args),
    restate: (...args) => events.restate(...args),
    list: (...args) => events.list(...args),
    get: (key) => events.get(key),
    count: (...args) => events.count(...args),
    markApplied: (...args) => events.markApplied(...args),
    perMinute: (...args) => events.perMinute(...args),
    lagPerMinute: (...args) => events.lagPerMinute(...args),
    stream: (...args) => events.stream(...args),
    ...replaced,
  };
}

describe('admin events export while events are being stored', () => {
  const suite = useTrayStorage();

  // Stopped quietly at the bound, the download ended as a complete one does: 200, a final newline,
  // nothing logged, its oldest matching events missing unseen.
  it('cuts the download short past ADMIN_EXPORT_MAX_ROWS when events stored after its count join the stream, and says so in the log', async () => {
    await storeEvents(suite.storage, [
      eventDoc({ webhook: 'busy', receivedAt: t('2026-11-20T10:00:00Z') }),
      eventDoc({ webhook: 'busy', receivedAt: t('2026-11-20T11:00:00Z') }),
    ]);
    const events = suite.storage.events;
    // One more stored between the count and the stream, received earlier (from a queue's backlog):
    // the newest-first stream reaches it after the two counted.
    const backlogged = eventsWith(events, {
      count: async (filter) => {
        const counted = await events.count(filter);
        await storeEvents(suite.storage, [
          eventDoc({ webhook: 'busy', receivedAt: t('2026-11-20T09:00:00Z') }),
        ]);
        return counted;
      },
    });
    const { logger, lines } = recordingLogger();
    const capped = adminApp(suite.storage, { deps: { exportMaxRows: 2, events: backlogged, logger } });
    try {
      const cut = await request(capped.app)
        .get('/admin/events/export?webhook=busy')
        .set(admin)
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(cut, 'a download that ended short').to.be.an('error');
      expect(await events.count({ webhook: 'busy' })).to.equal(3);
      const warning = lines.find((line) => line.msg === 'events export interrupted');
      expect(JSON.stringify(warning?.err), 'the warning, naming the bound').to.include(
        'ADMIN_EXPORT_MAX_ROWS',
      );
    } finally {
      capped.close();
    }
  });
});

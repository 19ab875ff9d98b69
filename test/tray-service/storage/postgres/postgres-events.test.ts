import { expect } from 'chai';
import pgDriver from 'pg';
import type { StoredEvent } from '../../../../tray-service/domain/stored-event.ts';
import type { EventsFilter } from '../../../../tray-service/storage/port.ts';
import { migrate } from '../../../../tray-service/storage/postgres/migrate.ts';
import {
  createPostgresEvents,
  eventsPageQuery,
} from '../../../../tray-service/storage/postgres/postgres-events.ts';
import { STREAM_BATCH } from '../../../../tray-service/storage/stream-events.ts';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { usePostgres } from '../../../support/use-postgres.ts';
import { planOf } from './plan-of.ts';

const t0 = Date.parse('2026-11-20T10:00:00.000Z');
const now = new Date(t0 + 1_000_000);
const keep = { retentionDays: 30, now };

type NewEvent = Omit<StoredEvent, 'storedAt' | 'expiresAt' | 'status' | 'error'>;

function delivery(key: string, overrides: Partial<NewEvent> = {}): NewEvent {
  return {
    key,
    event: 'comment.created',
    webhook: 'wh-main',
    data: { commentId: `c-${key}`, nested: { list: [1, 'two', null] } },
    receivedAt: new Date(t0),
    ...overrides,
  };
}

describe('storage/postgres events', () => {
  const pg = usePostgres();
  const clock = { now };
  const events = () => createPostgresEvents(pg.pool, () => clock.now);
  before(async () => {
    await migrate(pg.pool);
  });
  beforeEach(async () => {
    clock.now = now;
    await pg.pool.query('TRUNCATE stored_events');
  });

  describe('store', () => {
    it('stores a delivery with its outcome and returns it as stored', async () => {
      const stored = await events().store(delivery('k1'), { status: 'invalid', error: 'no postId' }, keep);
      expect(stored).to.deep.equal({
        ...delivery('k1'),
        storedAt: now,
        expiresAt: new Date(t0 + 30 * DAY_MS),
        status: 'invalid',
        error: 'no postId',
      });
      expect(await events().get('k1')).to.deep.equal(stored);
    });

    it('keeps the payload as jsonb, so SQL can query inside it', async () => {
      await events().store(delivery('k1'), { status: 'applied' }, keep);
      const { rows } = await pg.pool.query<{ id: string; kind: string }>(
        `SELECT data->>'commentId' AS id, jsonb_typeof(data->'nested'->'list') AS kind FROM stored_events`,
      );
      expect(rows).to.deep.equal([{ id: 'c-k1', kind: 'array' }]);
    });

    it('returns the first stored event unchanged when the same key is delivered again', async () => {
      const first = await events().store(delivery('k1'), { status: 'applied' }, keep);
      const again = await events().store(
        delivery('k1', { event: 'other', data: { changed: true } }),
        { status: 'invalid', error: 'later' },
        { retentionDays: 1, now: new Date(now.getTime() + 5_000) },
      );
      expect(again).to.deep.equal(first);
      expect(await events().get('k1')).to.deep.equal(first);
    });

    it('stores one event when the same delivery is stored concurrently, and every caller gets it', async () => {
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, n) =>
          events().store(delivery('k1', { data: { n } }), { status: 'applied' }, keep),
        ),
      );
      const stored = await events().get('k1');
      for (const result of results) expect(result).to.deep.equal(stored);
      expect(await events().count({})).to.equal(1);
    });

    it('stores the events of concurrent calls of one store together, each key once, every caller getting its key as first stored', async () => {
      const store = events();
      const first = await store.store(delivery('k0'), { status: 'applied' }, keep);
      const calls = ['k2', 'k1', 'k0', 'k1', 'k3', 'k2'].map((key, n) =>
        store.store(delivery(key, { data: { n } }), { status: n === 4 ? 'invalid' : 'applied' }, keep),
      );
      const results = await Promise.all(calls);
      expect(results.map((result) => [result.key, result.data])).to.deep.equal([
        ['k2', { n: 0 }],
        ['k1', { n: 1 }],
        ['k0', first.data],
        ['k1', { n: 1 }],
        ['k3', { n: 4 }],
        ['k2', { n: 0 }],
      ]);
      expect(results[4]?.status).to.equal('invalid');
      for (const result of results) expect(await store.get(result.key)).to.deep.equal(result);
      expect(await store.count({})).to.equal(4);
    });

    it('replaces an expired event the purge has not removed yet', async () => {
      await events().store(delivery('k1'), { status: 'applied' }, { retentionDays: 1, now });
      const later = new Date(t0 + 2 * DAY_MS);
      const fresh = delivery('k1', { receivedAt: later, data: { fresh: true } });
      const stored = await events().store(fresh, { status: 'stored' }, { retentionDays: 1, now: later });
      expect(stored).to.deep.equal({
        ...fresh,
        storedAt: later,
        expiresAt: new Date(later.getTime() + DAY_MS),
        status: 'stored',
      });
    });

    it('stores a payload holding U+0000, which PostgreSQL text cannot, with U+FFFD in its place', async () => {
      const stored = await events().store(
        delivery('k1', { data: { 'te\u0000xt': 'a\u0000b', list: ['\u0000'] } }),
        { status: 'invalid', error: 'bad \u0000' },
        keep,
      );
      expect(stored.data).to.deep.equal({ 'te\uFFFDxt': 'a\uFFFDb', list: ['\uFFFD'] });
      expect(stored.error).to.equal('bad \uFFFD');
    });
  });

  describe('get', () => {
    it('never returns an expired event', async () => {
      await events().store(delivery('k1'), { status: 'applied' }, { retentionDays: 1, now });
      clock.now = new Date(t0 + DAY_MS);
      expect(await events().get('k1')).to.equal(undefined);
      expect(await events().get('missing')).to.equal(undefined);
    });
  });

  describe('list, count and stream', () => {
    // Six events, two of them in the same millisecond (the key breaks the tie), one expired.
    beforeEach(async () => {
      const store = (key: string, at: number, overrides: Partial<NewEvent>, status: StoredEvent['status']) =>
        events().store(delivery(key, { receivedAt: new Date(t0 + at), ...overrides }), { status }, keep);
      await store('a', 1, {}, 'applied');
      await store('b', 2, { event: 'post.created' }, 'applied');
      await store('c', 3, { webhook: 'wh-other' }, 'invalid');
      await store('d', 3, {}, 'applied');
      await store('e', 4, { event: 'post.created' }, 'unknown');
      // Stored when it was received, 40 days ago: expired since.
      const old = new Date(now.getTime() - 40 * DAY_MS);
      await events().store(
        delivery('old', { receivedAt: old }),
        { status: 'applied' },
        { retentionDays: 30, now: old },
      );
    });
    const keys = (items: readonly StoredEvent[]) => items.map((item) => item.key);

    it('lists newest first, the key breaking ties, without expired events', async () => {
      expect(keys((await events().list({}, 10)).items)).to.deep.equal(['e', 'd', 'c', 'b', 'a']);
    });

    it('pages by key: the next page starts strictly after the last item, the last page has no next', async () => {
      const first = await events().list({}, 2);
      expect(keys(first.items)).to.deep.equal(['e', 'd']);
      expect(first.next).to.deep.equal({ at: new Date(t0 + 3), id: 'd' });
      const second = await events().list({}, 2, first.next);
      expect(keys(second.items)).to.deep.equal(['c', 'b']);
      const third = await events().list({}, 2, second.next);
      expect(third).to.deep.equal({ items: third.items });
      expect(keys(third.items)).to.deep.equal(['a']);
    });

    it('filters by event, webhook, status and a [since, until) range, and counts the same', async () => {
      const cases: [EventsFilter, string[]][] = [
        [{ event: 'post.created' }, ['e', 'b']],
        [{ webhook: 'wh-other' }, ['c']],
        [{ status: 'applied' }, ['d', 'b', 'a']],
        [{ since: new Date(t0 + 2), until: new Date(t0 + 4) }, ['d', 'c', 'b']],
        [{ event: 'comment.created', status: 'applied', since: new Date(t0 + 2) }, ['d']],
      ];
      for (const [filter, expected] of cases) {
        expect(keys((await events().list(filter, 10)).items), JSON.stringify(filter)).to.deep.equal(expected);
        expect(await events().count(filter), JSON.stringify(filter)).to.equal(expected.length);
      }
    });

    it('streams every match newest first', async () => {
      const streamed: string[] = [];
      for await (const event of events().stream({ event: 'comment.created' })) streamed.push(event.key);
      expect(streamed).to.deep.equal(['d', 'c', 'a']);
    });

    it('streams more events than one batch holds, in batches of bounded size', async () => {
      await pg.pool.query('TRUNCATE stored_events');
      const total = STREAM_BATCH * 2 + 7;
      await pg.pool.query(
        `INSERT INTO stored_events (key, event, webhook, data, received_at, stored_at, expires_at, status)
         SELECT 'k' || lpad(i::text, 5, '0'), 'comment.created', 'wh', '{}', $1::timestamptz + (i % 50) * interval '1 ms',
                $1, $1::timestamptz + interval '30 days', 'applied'
         FROM generate_series(1, $2) i`,
        [new Date(t0), total],
      );
      // Each statement takes a client from the pool: counting them counts the batches.
      const pool = new pgDriver.Pool({ connectionString: pg.url, max: 1 });
      let statements = 0;
      pool.on('acquire', () => statements++);
      const seen: StoredEvent[] = [];
      try {
        for await (const event of createPostgresEvents(pool, () => clock.now).stream({})) seen.push(event);
      } finally {
        await pool.end();
      }
      expect(statements).to.equal(Math.ceil(total / STREAM_BATCH));
      expect(seen).to.have.lengthOf(total);
      expect(new Set(seen.map((event) => event.key)).size).to.equal(total);
      const order = seen.map((event) => [event.receivedAt.getTime(), event.key] as const);
      const sorted = [...order].sort((x, y) => y[0] - x[0] || (x[1] < y[1] ? 1 : -1));
      expect(order).to.deep.equal(sorted);
    });
  });

  describe('the admin queries', () => {
    it('serve a filter on the acting user combined with another one from an index, in index order', async () => {
      const plan = await planOf(pg.pool, eventsPageQuery({ userId: 'u', event: 'post.didCreate' }, now, 50));
      expect(plan.nodes).to.not.include('Seq Scan').and.not.include('Sort');
    });

    const after = { at: new Date(t0), id: 'k' };
    for (const [filter, index] of [
      [{}, 'stored_events_received'],
      [{ since: new Date(t0), until: now }, 'stored_events_received'],
      [{ event: 'post.created' }, 'stored_events_event_received'],
      [{ webhook: 'wh-main' }, 'stored_events_webhook_received'],
      [{ status: 'invalid' }, 'stored_events_status_received'],
      [{ userId: 'u-ana' }, 'stored_events_user_received'],
      [{ communityId: 'c-hike' }, 'stored_events_community_received'],
      [{ moderation: 'any' }, 'stored_events_moderated_received'],
      [{ moderation: 'flag' }, 'stored_events_moderated_received'],
      [{ moderation: 'ban-request' }, 'stored_events_moderated_received'],
      [{ moderation: 'none' }, 'stored_events_received'],
    ] as const) {
      it(`reads a page filtered by ${JSON.stringify(filter)} from ${index}, in index order`, async () => {
        for (const key of [undefined, after])
          for (const maxBytes of [undefined, 16 * 1024 * 1024]) {
            // With maxBytes (every export and replay): the same index, its order kept through the
            // page's running sizes.
            const plan = await planOf(pg.pool, eventsPageQuery(filter, now, 50, key, maxBytes));
            expect(plan.indexes).to.deep.equal([index]);
            expect(plan.nodes).to.not.include('Sort');
          }
      });
    }
  });
});

import { expect } from 'chai';
import pgDriver from 'pg';
import { LAG_BUCKETS, lagBucket } from '../../../../tray-service/domain/lag-histogram.ts';
import { migrate } from '../../../../tray-service/storage/postgres/migrate.ts';
import { createPostgresEvents } from '../../../../tray-service/storage/postgres/postgres-events.ts';
import { usePostgres } from '../../../support/use-postgres.ts';
import { planOf } from './plan-of.ts';

const MINUTE = 60_000;
const minute = Math.floor(Date.now() / MINUTE) * MINUTE - 30 * MINUTE;

describe('storage/postgres per-minute rollups of the stored events', () => {
  const pg = usePostgres();
  before(async () => {
    await migrate(pg.pool);
  });

  it('counts each event into the UTC minute of its receipt, whatever the session’s time zone', async () => {
    const pool = new pgDriver.Pool({ connectionString: pg.url, options: '-c TimeZone=Asia/Kolkata' });
    try {
      const events = createPostgresEvents(pool);
      const receivedAt = new Date(minute + 59_999);
      await events.store(
        { key: 'tz', event: 'post.didCreate', data: {}, webhook: 'w', receivedAt },
        { status: 'applied' },
        { retentionDays: 1, now: new Date() },
      );
      expect(await events.perMinute(new Date(minute), new Date(minute + MINUTE))).to.deep.equal([
        { minute: new Date(minute), counts: { 'post.didCreate': 1 } },
      ]);
    } finally {
      await pool.end();
    }
  });

  it('keeps each minute’s histogram as its non-empty buckets, added bucket by bucket', async () => {
    const events = createPostgresEvents(pg.pool);
    const receivedAt = new Date(minute + MINUTE + 1_000);
    for (const [key, lag] of [
      ['a', 3],
      ['b', 3],
      ['c', 70_000],
    ] as const) {
      const stored = await events.store(
        { key, event: 'post.didCreate', data: {}, webhook: 'w', receivedAt },
        { status: 'applied' },
        { retentionDays: 1, now: new Date() },
      );
      await events.markApplied(stored, new Date(receivedAt.getTime() + lag));
    }
    const { rows } = await pg.pool.query<{ buckets: Record<string, number> }>(
      'SELECT buckets FROM stored_event_lag_minutes WHERE minute = $1',
      [new Date(minute + MINUTE)],
    );
    expect(rows[0]?.buckets).to.deep.equal({ [lagBucket(3)]: 2, [lagBucket(70_000)]: 1 });
    const [chart] = await events.lagPerMinute(new Date(minute + MINUTE), new Date(minute + 2 * MINUTE));
    expect(chart?.buckets).to.have.lengthOf(LAG_BUCKETS);
  });

  // The engine-neutral case is in the conformance suite; the test server of the MongoDB adapter
  // cannot keep this much (docs/storage.md), PostgreSQL must.
  it('tells exactly one of two makers marking one event at once that it made the mark, stores that one, and counts its lag once', async () => {
    const events = createPostgresEvents(pg.pool);
    const receivedAt = new Date(minute + 3 * MINUTE + 1_000);
    for (let round = 0; round < 20; round++) {
      const stored = await events.store(
        { key: `twins-${round}`, event: 'post.didCreate', data: {}, webhook: 'w', receivedAt },
        { status: 'applied' },
        { retentionDays: 1, now: new Date() },
      );
      const makers = ['job-a:0', 'job-b:0'];
      const answers = await Promise.all(
        makers.map((by, n) => events.markApplied(stored, new Date(receivedAt.getTime() + 40 + n), by)),
      );
      expect(answers.filter(Boolean), `round ${round}`).to.have.length(1);
      // The maker told it made the mark is the one stored: its rerun (a lost answer) is told so again.
      const reruns: boolean[] = [];
      for (const by of makers) reruns.push(await events.markApplied(stored, new Date(), by));
      expect(reruns, `round ${round}'s reruns`).to.deep.equal(answers);
    }
    const [chart] = await events.lagPerMinute(new Date(minute + 3 * MINUTE), new Date(minute + 4 * MINUTE));
    expect(chart?.count).to.equal(20);
  });

  it('keeps one row a minute, its counts by event name', async () => {
    const events = createPostgresEvents(pg.pool);
    const receivedAt = new Date(minute + 5 * MINUTE);
    await Promise.all(
      ['post.didCreate', 'post.didCreate', 'comment.didCreate'].map((event, n) =>
        events.store(
          { key: `m-${n}`, event, data: {}, webhook: 'w', receivedAt },
          { status: 'applied' },
          { retentionDays: 1, now: new Date() },
        ),
      ),
    );
    const { rows } = await pg.pool.query('SELECT counts FROM stored_event_minutes WHERE minute = $1', [
      new Date(minute + 5 * MINUTE),
    ]);
    expect(rows).to.deep.equal([{ counts: { 'post.didCreate': 2, 'comment.didCreate': 1 } }]);
  });

  describe('the chart queries', () => {
    for (const [table, index] of [
      ['stored_event_minutes', 'stored_event_minutes_pkey'],
      ['stored_event_lag_minutes', 'stored_event_lag_minutes_pkey'],
    ] as const) {
      it(`read a range of minutes from ${index}, in minute order`, async () => {
        const plan = await planOf(pg.pool, {
          text: `SELECT * FROM ${table} WHERE minute >= $1 AND minute < $2 AND expires_at > $3 ORDER BY minute`,
          values: [new Date(minute), new Date(minute + 1_440 * MINUTE), new Date()],
        });
        expect(plan.indexes).to.deep.equal([index]);
        expect(plan.nodes).to.not.include('Sort');
      });
    }
  });
});

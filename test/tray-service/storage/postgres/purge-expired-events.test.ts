import { expect } from 'chai';
import pgDriver from 'pg';
import { migrate } from '../../../../tray-service/storage/postgres/migrate.ts';
import type { EventsPort } from '../../../../tray-service/storage/port.ts';
import { createPostgresEvents } from '../../../../tray-service/storage/postgres/postgres-events.ts';
import { purgeExpiredEvents } from '../../../../tray-service/storage/postgres/purge-expired-events.ts';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { usePostgres } from '../../../support/use-postgres.ts';
import { waitFor } from '../../../support/wait-for.ts';
import { planOf, recordingPool } from './plan-of.ts';

const t0 = Date.parse('2026-11-20T10:00:00.000Z');
/** Ten days past the 30-day retention of events received at t0. */
const later = new Date(t0 + 40 * DAY_MS);
const store = (events: EventsPort, key: string, receivedAt: Date, data: Record<string, number>) =>
  events.store(
    { key, event: 'post.didCreate', webhook: 'w', data, receivedAt },
    { status: 'applied' },
    { retentionDays: 30, now: receivedAt },
  );

describe('storage/postgres purgeExpiredEvents', () => {
  const pg = usePostgres();
  before(async () => {
    await migrate(pg.pool);
  });

  it('deletes every expired event in batches and keeps the others', async () => {
    const events = createPostgresEvents(pg.pool, () => new Date(t0));
    for (let n = 0; n < 7; n++) {
      await events.store(
        { key: `k${n}`, event: 'e', webhook: 'w', data: {}, receivedAt: new Date(t0 + n * DAY_MS) },
        { status: 'applied' },
        { retentionDays: 1, now: new Date(t0) },
      );
    }
    // k0..k3 expire at t0 + 1..4 days; k4..k6 later.
    expect(await purgeExpiredEvents(pg.pool, new Date(t0 + 4 * DAY_MS), 2)).to.deep.equal({
      purged: 4,
      failures: [],
    });
    const { rows } = await pg.pool.query<{ key: string }>('SELECT key FROM stored_events ORDER BY key');
    expect(rows.map((row) => row.key)).to.deep.equal(['k4', 'k5', 'k6']);
    expect(await purgeExpiredEvents(pg.pool, new Date(t0 + 4 * DAY_MS), 2)).to.deep.equal({
      purged: 0,
      failures: [],
    });
  });

  it('finds the expired events and minutes through their expiry indexes, oldest first, without a sort', async () => {
    const recording = recordingPool(pg.pool);
    await purgeExpiredEvents(recording.pool, new Date(t0));
    const expiryIndexes: string[] = [];
    for (const statement of recording.statements) {
      const plan = await planOf(pg.pool, statement);
      expect(plan.nodes, statement.text).not.to.include('Seq Scan');
      expect(plan.nodes, statement.text).not.to.include('Sort');
      expiryIndexes.push(
        ...plan.indexScans
          .filter(({ node, index }) => node === 'Index Scan' && index.endsWith('_expiry'))
          .map(({ index }) => index),
      );
    }
    expect(expiryIndexes).to.deep.equal([
      'stored_events_expiry',
      'moderation_decisions_expiry',
      'stored_event_minutes_expiry',
      'stored_event_lag_minutes_expiry',
    ]);
  });

  describe('beside a redelivery replacing an expired event, in a transaction not yet committed', () => {
    // The writer's transaction is held open on a pool of one connection: every statement of the
    // real store runs in it, and the test commits it when the purge has run or is waiting for it.
    let writer: pgDriver.Pool;
    let writerPid = 0;
    beforeEach(async () => {
      await pg.pool.query('TRUNCATE stored_events, stored_event_minutes, stored_event_lag_minutes');
      writer = new pgDriver.Pool({ connectionString: pg.url, max: 1 });
      await writer.query('BEGIN');
      writerPid = (await writer.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid ?? 0;
    });
    afterEach(async () => {
      await writer.query('ROLLBACK');
      await writer.end();
    });

    /** Starts a purge at `later` and waits until it has ended or waits for the writer's rows. */
    const purgeBeside = async () => {
      let ended = false;
      const purging = purgeExpiredEvents(pg.pool, later).finally(() => {
        ended = true;
      });
      // Kept from failing unobserved while the test waits; awaited below.
      purging.catch(() => undefined);
      await waitFor(
        async () =>
          ended ||
          ((
            await pg.pool.query('SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [
              writerPid,
            ])
          ).rowCount ?? 0) > 0,
        10_000,
        "the purge to end or to wait for the writer's row",
      );
      return purging;
    };

    it('keeps the replacing event: it counts as new, 30 days to live, and its minute counts it', async () => {
      await store(createPostgresEvents(pg.pool), 'k1', new Date(t0), { v: 1 });
      await store(createPostgresEvents(writer), 'k1', later, { v: 2 });
      const purging = purgeBeside();
      await writer.query('COMMIT');
      await purging;
      await writer.query('BEGIN');
      const { rows } = await pg.pool.query<{ data: unknown; expires_at: Date }>(
        "SELECT data, expires_at FROM stored_events WHERE key = 'k1'",
      );
      expect(rows).to.deep.equal([{ data: { v: 2 }, expires_at: new Date(later.getTime() + 30 * DAY_MS) }]);
      expect((await createPostgresEvents(pg.pool, () => later).get('k1'))?.data).to.deep.equal({ v: 2 });
      // The rollup counted the replacing event when it was stored; the event it counts is there.
      const minutes = await pg.pool.query('SELECT minute, counts FROM stored_event_minutes');
      expect(minutes.rows).to.deep.equal([{ minute: later, counts: { 'post.didCreate': 1 } }]);
    });

    it('never waits for a row a writer holds, so it cannot deadlock with a batch storing keys in key order', async () => {
      // b expires first: the purge takes it, then a; the writer takes a, then b (key order).
      await store(createPostgresEvents(pg.pool), 'b', new Date(t0), { v: 1 });
      await store(createPostgresEvents(pg.pool), 'a', new Date(t0 + 1), { v: 1 });
      await store(createPostgresEvents(writer), 'a', later, { v: 2 });
      const purging = purgeBeside();
      const storingB = store(createPostgresEvents(writer), 'b', later, { v: 2 });
      const [purged, stored] = await Promise.allSettled([purging, storingB]);
      const failure = (result: PromiseSettledResult<unknown>) =>
        result.status === 'rejected' ? `: ${(result.reason as Error).message}` : '';
      expect(purged.status, `the purge${failure(purged)}`).to.equal('fulfilled');
      expect(stored.status, `the writer's second key${failure(stored)}`).to.equal('fulfilled');
      await writer.query('COMMIT');
      await writer.query('BEGIN');
      const { rows } = await pg.pool.query<{ key: string }>('SELECT key FROM stored_events ORDER BY key');
      expect(rows.map((row) => row.key)).to.deep.equal(['a', 'b']);
    });
  });
});

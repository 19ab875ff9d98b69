import { expect } from 'chai';
import { migrate } from '../../../../tray-service/storage/postgres/migrate.ts';
import { createPostgresEvents } from '../../../../tray-service/storage/postgres/postgres-events.ts';
import { purgeExpiredEvents } from '../../../../tray-service/storage/postgres/purge-expired-events.ts';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { usePostgres } from '../../../support/use-postgres.ts';
import { planOf } from './plan-of.ts';

const t0 = Date.parse('2026-11-20T10:00:00.000Z');

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
    expect(await purgeExpiredEvents(pg.pool, new Date(t0 + 4 * DAY_MS), 2)).to.equal(4);
    const { rows } = await pg.pool.query<{ key: string }>('SELECT key FROM stored_events ORDER BY key');
    expect(rows.map((row) => row.key)).to.deep.equal(['k4', 'k5', 'k6']);
    expect(await purgeExpiredEvents(pg.pool, new Date(t0 + 4 * DAY_MS), 2)).to.equal(0);
  });

  it('finds the expired events through the expiry index', async () => {
    const plan = await planOf(pg.pool, {
      text: 'SELECT key FROM stored_events WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2',
      values: [new Date(t0), 1_000],
    });
    expect(plan.indexes).to.deep.equal(['stored_events_expiry']);
  });
});

import { expect } from 'chai';
import { DAY_MS } from '../../../../../shared/time/durations.ts';
import { migrate } from '../../../../../tray-service/storage/postgres/migrate.ts';
import {
  insertChanges,
  refoldMemberships,
} from '../../../../../tray-service/storage/postgres/postgres-memberships.ts';
import { schemaBefore } from './schema-before.ts';
import { usePostgres } from '../../../../support/use-postgres.ts';

const now = Date.parse('2026-11-20T10:00:00.000Z');
const daysAgo = (days: number) => now - days * DAY_MS;

describe('storage/postgres migration 0018 (when each membership change was processed)', () => {
  const pg = usePostgres();

  it('gives changes stored before it the upgrade’s time, so the prune keeps them until its cutoff is a day past it', async function () {
    this.timeout(60_000);
    await schemaBefore(pg.pool, 18);
    for (const [joined, days] of [
      [true, 200],
      [false, 150],
      [true, 100],
    ] as const)
      await pg.pool.query(
        `INSERT INTO tray_membership_changes (community_id, user_id, at, joined) VALUES ('c-1', 'u-ana', $1, $2)`,
        [daysAgo(days), joined],
      );

    const before = Date.now();
    expect(await migrate(pg.pool)).to.include(18);
    const stamped = await pg.pool.query<{ processed_at: string }>(
      'SELECT processed_at FROM tray_membership_changes',
    );
    for (const row of stamped.rows)
      expect(Number(row.processed_at)).to.be.within(before - 1_000, Date.now() + 1_000);

    // A leave processed a day after the upgrade (whose clock this test reads as `upgrade`), then
    // 91 days on: nothing is pruned while the cutoff is within a day of the upgrade...
    const upgrade = Number(stamped.rows[0]?.processed_at);
    const leaveAndRefold = async (now: number, days: number) => {
      const client = await pg.pool.connect();
      try {
        await insertChanges(
          client,
          [{ communityId: 'c-1', userId: 'u-ana', active: false, at: now - days * DAY_MS }],
          now,
        );
        await refoldMemberships(client, [{ communityId: 'c-1', userId: 'u-ana' }], now - 90 * DAY_MS);
      } finally {
        client.release();
      }
    };
    const ats = async () =>
      (await pg.pool.query<{ at: string }>('SELECT at FROM tray_membership_changes ORDER BY at')).rows.map(
        (row) => Number(row.at),
      );
    await leaveAndRefold(upgrade + 90.5 * DAY_MS, 0);
    expect(await ats()).to.have.length(4);
    // ...and the join of 200 days before the test's `now` goes once it is further past.
    await leaveAndRefold(upgrade + 92 * DAY_MS, 0);
    expect(await ats()).to.deep.equal([
      daysAgo(150),
      daysAgo(100),
      upgrade + 90.5 * DAY_MS,
      upgrade + 92 * DAY_MS,
    ]);
  });
});

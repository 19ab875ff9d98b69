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

  it('leaves changes stored before it without a processing time, which the prune takes as long ago', async function () {
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

    expect(await migrate(pg.pool)).to.include(18);
    const client = await pg.pool.connect();
    try {
      await insertChanges(
        client,
        [{ communityId: 'c-1', userId: 'u-ana', active: false, at: daysAgo(1) }],
        now,
      );
      await refoldMemberships(client, [{ communityId: 'c-1', userId: 'u-ana' }], daysAgo(90));
    } finally {
      client.release();
    }
    const { rows } = await pg.pool.query<{ at: string; joined: boolean; processed_at: string | null }>(
      'SELECT at, joined, processed_at FROM tray_membership_changes ORDER BY at',
    );
    // The join of 200 days ago went; the leave after it and the join of 100 days ago (the state at
    // the cutoff) stay, and the new leave carries its processing time.
    expect(rows.map((row) => [(now - Number(row.at)) / DAY_MS, row.joined, row.processed_at])).to.deep.equal([
      [150, false, null],
      [100, true, null],
      [1, false, String(now)],
    ]);
  });
});

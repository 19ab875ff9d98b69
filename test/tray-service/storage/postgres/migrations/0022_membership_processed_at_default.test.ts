import { expect } from 'chai';
import { migrate, readMigrations } from '../../../../../tray-service/storage/postgres/migrate.ts';
import { usePostgres } from '../../../../support/use-postgres.ts';

describe('storage/postgres migration 0022 (a processing time for the membership changes of older workers)', () => {
  const pg = usePostgres();

  it('gives a change stored as a worker of before 0018 stores it its own time, and one left without any the upgrade’s', async function () {
    this.timeout(60_000);
    const migrations = readMigrations();
    await migrate(
      pg.pool,
      migrations.filter((migration) => migration.version < 22),
    );
    // The statement of a worker of before 0018, still running while a new instance migrated.
    const olderWorker = `INSERT INTO tray_membership_changes (community_id, user_id, at, joined)
      VALUES ($1, 'u-ana', 1000, false)`;
    await pg.pool.query(olderWorker, ['c-before']);
    const before = Date.now();
    expect(
      await migrate(
        pg.pool,
        migrations.filter((migration) => migration.version <= 22),
      ),
    ).to.deep.equal([22]);
    await pg.pool.query(olderWorker, ['c-after']);
    const { rows } = await pg.pool.query<{ community_id: string; processed_at: string | null }>(
      'SELECT community_id, processed_at FROM tray_membership_changes ORDER BY community_id',
    );
    expect(rows.map((row) => row.community_id)).to.deep.equal(['c-after', 'c-before']);
    for (const row of rows)
      expect(Number(row.processed_at), row.community_id).to.be.within(before - 1_000, Date.now() + 1_000);
  });
});

import { expect } from 'chai';
import { migrate, readMigrations } from '../../../../../tray-service/storage/postgres/migrate.ts';
import { usePostgres } from '../../../../support/use-postgres.ts';

describe('storage/postgres migrations 0022 and 0024 (a processing time for the membership changes of older workers)', () => {
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
        migrations.filter((migration) => migration.version <= 24),
      ),
    ).to.deep.equal([22, 23, 24]);
    await pg.pool.query(olderWorker, ['c-after']);
    const { rows } = await pg.pool.query<{ community_id: string; processed_at: string | null }>(
      'SELECT community_id, processed_at FROM tray_membership_changes ORDER BY community_id',
    );
    expect(rows.map((row) => row.community_id)).to.deep.equal(['c-after', 'c-before']);
    for (const row of rows)
      expect(Number(row.processed_at), row.community_id).to.be.within(before - 1_000, Date.now() + 1_000);
  });

  // 0022 held its ALTER's lock (ACCESS EXCLUSIVE) across the update's read of the whole table:
  // every join, leave and fan-out of the instances still running waited for it.
  it('leaves the read of the whole table to a migration of its own, apart from the ALTER and its lock', () => {
    const byVersion = new Map(readMigrations().map((migration) => [migration.version, migration.sql]));
    expect(byVersion.get(22)).to.match(/ALTER TABLE/);
    expect(byVersion.get(22)).not.to.match(/\bUPDATE\b/);
    expect(byVersion.get(24)).to.match(/^UPDATE tray_membership_changes/m);
    expect(byVersion.get(24)).not.to.match(/ALTER TABLE/);
  });
});

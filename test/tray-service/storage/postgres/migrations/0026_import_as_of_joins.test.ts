import { expect } from 'chai';
import { migrate } from '../../../../../tray-service/storage/postgres/migrate.ts';
import { createPostgresMembersImport } from '../../../../../tray-service/storage/postgres/postgres-members-import.ts';
import { schemaBefore } from './schema-before.ts';
import { usePostgres } from '../../../../support/use-postgres.ts';

describe('storage/postgres migration 0026 (every list’s as-of join)', () => {
  const pg = usePostgres();

  it('reads an imported member stored before it as before (joins at since and as_of), and keeps each later list’s time beside them', async function () {
    this.timeout(60_000);
    const { pool } = pg;
    await schemaBefore(pool, 26);
    // Imported as of 10 (since 0), having left at 5 through the worker before that list.
    await pool.query("INSERT INTO tray_imported_members VALUES ('c-hike', 'u-ana', 0, 10)");
    await pool.query(
      "INSERT INTO tray_membership_changes (community_id, user_id, at, joined) VALUES ('c-hike', 'u-ana', 5, false)",
    );
    expect(await migrate(pool)).to.deep.equal([26]);
    const joins = async () =>
      (
        await pool.query<{ at: string }>(
          "SELECT at FROM tray_membership_edges('c-hike', 'u-ana') WHERE joined ORDER BY at",
        )
      ).rows.map((row) => Number(row.at));
    const memberAt = async (at: number) =>
      (
        await pool.query<{ member: boolean }>(
          "SELECT tray_member_for('c-hike', 'u-ana', $1, 9000000000) AS member",
          [at],
        )
      ).rows[0]?.member;
    expect(await joins()).to.deep.equal([0, 10]);
    expect([await memberAt(3), await memberAt(7), await memberAt(12)]).to.deep.equal([true, false, true]);
    // A later list adds its time; the one before stays.
    const counts = await createPostgresMembersImport(pool).importBatch(
      [{ communityId: 'c-hike', userId: 'u-ana', since: 0 }],
      20,
    );
    expect(counts).to.deep.equal({ inserted: 0, updated: 1, unchanged: 0 });
    expect(await joins()).to.deep.equal([0, 10, 20]);
  });
});

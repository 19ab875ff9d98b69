import { expect } from 'chai';
import type pg from 'pg';
import { migrate } from '../../../../../tray-service/storage/postgres/migrate.ts';
import { comment, join, post, useTray, at } from '../tray-fixture.ts';
import { waitFor } from '../../../../support/wait-for.ts';

/** The tables as a deletion stored them before this migration: the name, no mark, no column for it. */
async function asBeforeTheMark(pool: pg.Pool): Promise<void> {
  await pool.query(`UPDATE tray_records SET actors = (
      SELECT json_agg(e - 'deleted' ORDER BY o) FROM jsonb_array_elements(actors::jsonb) WITH ORDINALITY AS x(e, o))`);
  for (const table of ['tray_personal_actions', 'tray_community_posts'])
    await pool.query(`UPDATE ${table} SET activity = activity #- '{actor,deleted}'`);
  for (const table of ['tray_target_actors', 'tray_group_actions'])
    await pool.query(`ALTER TABLE ${table} DROP COLUMN actor_deleted`);
  await pool.query('DELETE FROM schema_migrations WHERE version = 13');
}

describe('storage/postgres migration 0013 (deleted actor mark)', () => {
  const tray = useTray();

  it("marks the snapshots deletions rewrote before the mark existed, and not a live user called 'Deleted user'", async function () {
    this.timeout(60_000);
    const { pool } = tray.pg;
    await tray.writes.applyMemberships([join('c-hike', 'u-ana', 0)], tray.context());
    await tray.writes.fanOutPosts('c-hike', [post('c-hike', 'u-cid', 1)], tray.context());
    await tray.writes.applyPersonal(
      [
        comment('p-1', 'u-cid', 1),
        { ...comment('p-1', 'u-dee', 2), actor: { userId: 'u-dee', name: 'Deleted user' } },
      ],
      tray.context(),
    );
    await tray.writes.applyProfiles(
      [{ userId: 'u-cid', displayName: 'Deleted user', deleted: true, at: at(3) }],
      tray.context(),
    );
    await asBeforeTheMark(pool);
    const changedAt = (await tray.record('u-ana', 'comment', 'p-1'))?.changedAt;

    expect(await migrate(pool)).to.deep.equal([13]);

    const record = await tray.record('u-ana', 'comment', 'p-1');
    expect(record?.actors.map((actor) => [actor.userId, actor.name, actor.deleted ?? false])).to.deep.equal([
      ['u-dee', 'Deleted user', false],
      ['u-cid', 'Deleted user', true],
    ]);
    expect(record?.changedAt, 'changedAt').to.equal(changedAt);
    expect((await tray.record('u-ana', 'post', 'c-hike'))?.actors[0]).to.include({ deleted: true });
    const marks = await pool.query<{ source: string; actor_id: string; deleted: boolean }>(
      `SELECT 'target' AS source, actor_id, actor_deleted AS deleted FROM tray_target_actors
       UNION ALL SELECT 'group', actor_id, actor_deleted FROM tray_group_actions
       UNION ALL SELECT 'personal', actor_id, coalesce((activity->'actor'->>'deleted')::boolean, false)
                 FROM tray_personal_actions
       UNION ALL SELECT 'post', actor_id, coalesce((activity->'actor'->>'deleted')::boolean, false)
                 FROM tray_community_posts
       ORDER BY 1, 2`,
    );
    expect(marks.rows.map((row) => `${row.source} ${row.actor_id} ${row.deleted}`)).to.deep.equal([
      'group u-cid true',
      'group u-cid true',
      'group u-dee false',
      'personal u-cid true',
      'personal u-dee false',
      'post u-cid true',
      'target u-cid true',
      'target u-cid true',
      'target u-dee false',
    ]);
  });

  it("marks each deleted actor among live ones, whatever the number of deleted profiles, and not a live user called 'Deleted user'", async function () {
    this.timeout(60_000);
    const { pool } = tray.pg;
    // Records naming a deleted user beside a live one and a live one called 'Deleted user', live
    // users only, a deleted user alone, and two deleted users around a live one.
    await tray.writes.applyPersonal(
      [
        comment('p-1', 'u-cid', 1),
        { ...comment('p-1', 'u-dee', 2), actor: { userId: 'u-dee', name: 'Deleted user' } },
        comment('p-1', 'u-eve', 3),
        comment('p-4', 'u-cid', 4),
        comment('p-4', 'u-eve', 4),
        comment('p-4', 'u-fay', 4),
        comment('p-2', 'u-eve', 5),
        { ...comment('p-2', 'u-dee', 6), actor: { userId: 'u-dee', name: 'Deleted user' } },
        comment('p-3', 'u-fay', 7),
      ],
      tray.context(),
    );
    await tray.writes.applyProfiles(
      [
        { userId: 'u-cid', displayName: 'Deleted user', deleted: true, at: at(8) },
        { userId: 'u-fay', displayName: 'Deleted user', deleted: true, at: at(8) },
      ],
      tray.context(),
    );
    // Many more users deleted, who are in no record: the mark's cost and result do not depend on them.
    await pool.query(
      `INSERT INTO tray_profiles (user_id, display_name, deleted, updated_at)
       SELECT 'u-gone-' || i, 'Deleted user', true, 0 FROM generate_series(1, 5000) AS i`,
    );
    await asBeforeTheMark(pool);

    expect(await migrate(pool)).to.deep.equal([13]);

    const actors = async (postId: string) =>
      (await tray.record('u-ana', 'comment', postId))?.actors.map(
        (actor) => `${actor.userId} ${actor.name} ${actor.deleted ?? false}`,
      );
    expect(await actors('p-1')).to.have.members([
      'u-cid Deleted user true',
      'u-dee Deleted user false',
      'u-eve U-EVE false',
    ]);
    expect(await actors('p-2')).to.have.members(['u-eve U-EVE false', 'u-dee Deleted user false']);
    expect(await actors('p-3')).to.deep.equal(['u-fay Deleted user true']);
    expect(await actors('p-4')).to.have.members([
      'u-cid Deleted user true',
      'u-eve U-EVE false',
      'u-fay Deleted user true',
    ]);
  });

  // Its ADD COLUMNs take ACCESS EXCLUSIVE on tray_target_actors and tray_group_actions, which every
  // write of the worker updates: held through the scan of tray_records, they would block a
  // still-running earlier instance's writes for as long as the scan takes.
  it('scans tray_records before it locks the tables every write updates', async function () {
    this.timeout(60_000);
    const { pool } = tray.pg;
    await tray.writes.applyPersonal([comment('p-1', 'u-cid', 1)], tray.context());
    await tray.writes.applyProfiles(
      [{ userId: 'u-cid', displayName: 'Deleted user', deleted: true, at: at(2) }],
      tray.context(),
    );
    await asBeforeTheMark(pool);
    // An earlier instance's transaction holding the record the scan marks: the scan waits for it.
    const holder = await pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query("SELECT 1 FROM tray_records WHERE user_id = 'u-ana' FOR UPDATE");
      const holding = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
      const migrating = migrate(pool);
      let waiting: number | undefined;
      await waitFor(
        async () => {
          const { rows } = await pool.query<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity
             WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1`,
            [holding],
          );
          waiting = rows[0]?.pid;
          return waiting !== undefined;
        },
        5_000,
        'the scan of tray_records to wait for the held record',
      );
      const { rows } = await pool.query<{ relation: string; mode: string }>(
        `SELECT relation::regclass::text AS relation, mode FROM pg_locks
         WHERE pid = $1 AND relation IN ('tray_target_actors'::regclass, 'tray_group_actions'::regclass)`,
        [waiting],
      );
      await holder.query('COMMIT');
      expect(rows, 'locks held by the migration while it scans tray_records').to.deep.equal([]);
      expect(await migrating).to.deep.equal([13]);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      holder.release();
    }
  });
});

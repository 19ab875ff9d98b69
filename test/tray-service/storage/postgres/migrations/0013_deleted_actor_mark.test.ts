import { expect } from 'chai';
import { migrate } from '../../../../../tray-service/storage/postgres/migrate.ts';
import { comment, join, post, useTray, at } from '../tray-fixture.ts';

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
    // As a deletion stored them before this migration: the name, no mark, no column for it.
    await pool.query(`UPDATE tray_records SET actors = (
        SELECT json_agg(e - 'deleted' ORDER BY o) FROM jsonb_array_elements(actors::jsonb) WITH ORDINALITY AS x(e, o))`);
    for (const table of ['tray_personal_actions', 'tray_community_posts'])
      await pool.query(`UPDATE ${table} SET activity = activity #- '{actor,deleted}'`);
    for (const table of ['tray_target_actors', 'tray_group_actions'])
      await pool.query(`ALTER TABLE ${table} DROP COLUMN actor_deleted`);
    await pool.query('DELETE FROM schema_migrations WHERE version = 13');
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
});

import { expect } from 'chai';
import { migrate } from '../../../../../tray-service/storage/postgres/migrate.ts';
import { comment, join, leave, post, useTray } from '../tray-fixture.ts';

describe('storage/postgres migration 0015 (late leave)', () => {
  const tray = useTray();

  it('takes changes stored before it as processed before the actions stored before it, and numbers what comes after', async function () {
    this.timeout(60_000);
    const { pool } = tray.pg;
    // Ana leaves at 3 (on time): Dee's post at 5 does not reach her.
    await tray.writes.applyMemberships([join('c-hike', 'u-ana', 0)], tray.context());
    await tray.writes.fanOutPosts('c-hike', [post('c-hike', 'u-cid', 1)], tray.context());
    await tray.writes.applyMemberships([leave('c-hike', 'u-ana', 3)], tray.context());
    await tray.writes.fanOutPosts('c-hike', [post('c-hike', 'u-dee', 5)], tray.context());
    // Cid comments on Ana's post at 4, while she is away: kept, counted for no one.
    await tray.writes.applyPersonal([comment('p-ana', 'u-cid', 4)], tray.context());
    // As stored before this migration: no processing order.
    for (const table of ['tray_membership_changes', 'tray_personal_actions', 'tray_community_posts'])
      await pool.query(`ALTER TABLE ${table} DROP COLUMN processed`);
    for (const name of ['tray_away_for', 'tray_member_for', 'tray_membership_edges'])
      await pool.query(`DROP FUNCTION ${name}`);
    await pool.query('DROP SEQUENCE tray_processed');
    await pool.query('DELETE FROM schema_migrations WHERE version = 15');

    expect(await migrate(pool)).to.deep.equal([15]);

    const order = await pool.query<{ source: string; processed: string }>(
      `SELECT 'change' AS source, processed FROM tray_membership_changes
       UNION ALL SELECT 'post', processed FROM tray_community_posts
       UNION ALL SELECT 'personal', processed FROM tray_personal_actions ORDER BY 1, 2`,
    );
    expect(order.rows.map((row) => `${row.source} ${row.processed}`)).to.deep.equal([
      'change 0',
      'change 0',
      'personal 1',
      'post 1',
      'post 1',
    ]);
    // Eve's post at 2, processed now, reaches Ana and her record is counted exactly: Dee's post,
    // in the time away and stored after the leave, still counts for nothing.
    await tray.writes.fanOutPosts('c-hike', [post('c-hike', 'u-eve', 2)], tray.context());
    const record = await tray.record('u-ana', 'post', 'c-hike');
    expect(record?.actors.map((actor) => actor.userId)).to.deep.equal(['u-eve', 'u-cid']);
    expect(record?.actorsCount).to.equal(2);
    const next = await pool.query<{ processed: string }>(
      "SELECT processed FROM tray_community_posts WHERE actor_id = 'u-eve'",
    );
    expect(Number(next.rows[0]?.processed)).to.be.at.least(2);
    // Eve's comment at 2, while Ana was a member, makes her comment record: Cid's of her time away,
    // kept from before the migration, still counts for nothing.
    await tray.writes.applyPersonal([comment('p-ana', 'u-eve', 2)], tray.context());
    const comments = await tray.record('u-ana', 'comment', 'p-ana');
    expect(comments?.actors.map((actor) => actor.userId)).to.deep.equal(['u-eve']);
    expect(comments?.actorsCount).to.equal(1);
  });
});

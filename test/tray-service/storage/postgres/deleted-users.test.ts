import { expect } from 'chai';
import type pg from 'pg';
import {
  renameInRecords,
  renameKeptActivities,
} from '../../../../tray-service/storage/postgres/deleted-users.ts';
import { planOf, recordingPool } from './plan-of.ts';
import { comment, join, post, useTray } from './tray-fixture.ts';

// A deletion rewrites a user's snapshots wherever they are named. tray_records,
// tray_personal_actions and tray_community_posts have no index by actor, and a statement reading
// one of them whole stops at the statement timeout at a few million rows: every statement reaches
// the rows it changes through the user's kept actions and the tables' primary keys instead.
describe('storage/postgres deleted users', () => {
  const tray = useTray();

  it('finds the records and kept snapshots naming a deleted user without reading a table whole', async () => {
    await tray.writes.applyMemberships([join('c-hike', 'u-ana', 0)], tray.context());
    await tray.writes.fanOutPosts('c-hike', [post('c-hike', 'u-cid', 1)], tray.context());
    await tray.writes.applyPersonal([comment('p-1', 'u-cid', 1)], tray.context());
    const recording = recordingPool(tray.pg.pool);
    await renameKeptActivities(recording.pool, ['u-cid']);
    await renameInRecords(recording.pool, ['u-cid'], tray.context().now, async () => undefined);
    const read = recording.statements.map((statement) => statement.text).join('\n');
    for (const table of ['tray_records', 'tray_personal_actions', 'tray_community_posts'])
      expect(read, table).to.include(table);
    for (const statement of recording.statements) {
      const plan = await planOf(tray.pg.pool, statement);
      expect(plan.readWhole, statement.text).to.deep.equal([]);
    }
  });
});

// A prolific account (often the spam account a deletion is for) reached hundreds of thousands of
// records: rewritten by one statement, the deletion met the statement timeout on every retry, and
// its name stayed in everyone's tray.
describe('storage/postgres deleted users, many records reached', () => {
  const tray = useTray();

  it('rewrites the records of a deleted user’s personal actions `page` at a time', async () => {
    const owners = ['u-ana', 'u-ben', 'u-dee', 'u-eve', 'u-fay'];
    for (const [n, owner] of owners.entries())
      await tray.writes.applyPersonal([comment(`p-${n}`, 'u-cid', 1, owner)], tray.context());
    const updated: number[] = [];
    const counting = {
      query: async (text: string, values: unknown[] = []) => {
        const result = await tray.pg.pool.query(text, values);
        if (/^\s*UPDATE tray_records/.test(text)) updated.push(result.rowCount ?? 0);
        return result;
      },
    } as unknown as pg.Pool;
    const told: number[] = [];
    await renameInRecords(
      counting,
      ['u-cid'],
      tray.context().now,
      async (records) => void told.push(records.length),
      2,
    );
    expect(
      updated.reduce((sum, rows) => sum + rows, 0),
      'records renamed',
    ).to.equal(5);
    expect(Math.max(...updated), 'records one statement renamed').to.be.at.most(2);
    expect(told.filter((count) => count > 0)).to.deep.equal([2, 2, 1]);
  });
});

// Migration 0006 kept each actor's latest action of a group without whom it reached, and only an
// author's latest post as an action: what a deployment upgraded from before it still holds.
describe('storage/postgres deleted users, with actions kept before migration 0006', () => {
  const tray = useTray();
  const actorsOf = async (userId: string) =>
    (
      await tray.pg.pool.query<{ actors: { name: string }[] }>(
        'SELECT actors FROM tray_records WHERE user_id = $1',
        [userId],
      )
    ).rows.map((row) => row.actors.map((actor) => actor.name));

  it('renames a record whose kept action names no recipient, reading the records a page at a time', async () => {
    await tray.writes.applyPersonal([comment('p-1', 'u-cid', 1)], tray.context());
    await tray.writes.applyPersonal([comment('p-2', 'u-cid', 2, 'u-ben')], tray.context());
    await tray.pg.pool.query(`UPDATE tray_group_actions SET recipient = '' WHERE actor_id = 'u-cid'`);
    await renameInRecords(tray.pg.pool, ['u-cid'], tray.context().now, async () => undefined, 1);
    expect([await actorsOf('u-ana'), await actorsOf('u-ben')]).to.deep.equal([
      [['Deleted user']],
      [['Deleted user']],
    ]);
  });

  it("renames each of a deleted author's kept posts, also those without a kept action of their own", async () => {
    await tray.writes.applyMemberships([join('c-hike', 'u-ana', 0)], tray.context());
    await tray.writes.fanOutPosts('c-hike', [post('c-hike', 'u-cid', 1)], tray.context());
    await tray.writes.fanOutPosts('c-hike', [post('c-hike', 'u-cid', 2)], tray.context());
    await tray.pg.pool.query(`DELETE FROM tray_group_actions WHERE action_id = 'p-u-cid-1'`);
    await renameKeptActivities(tray.pg.pool, ['u-cid']);
    const names = await tray.pg.pool.query<{ name: string }>(
      `SELECT activity->'actor'->>'name' AS name FROM tray_community_posts ORDER BY action_id`,
    );
    expect(names.rows.map((row) => row.name)).to.deep.equal(['Deleted user', 'Deleted user']);
  });
});

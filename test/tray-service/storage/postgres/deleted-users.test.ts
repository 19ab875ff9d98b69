import { expect } from 'chai';
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

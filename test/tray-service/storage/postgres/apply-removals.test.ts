import { expect } from 'chai';
import { applyRemovals } from '../../../../tray-service/storage/postgres/apply-removals.ts';
import type { SqlQuery } from '../../../../tray-service/storage/postgres/sql-conditions.ts';
import { planOf } from './plan-of.ts';
import { at, comment, join, leave, post, RETENTION_MS, useTray } from './tray-fixture.ts';

// A removal computes again every record of the groups that lost an action: for a community's post
// group, the records of everyone who may hold one (an interval or an away span there), each read by
// the primary keys. None of its statements may read a table whole: tray_records, tray_memberships
// and tray_member_away grow with the whole service, not with the removal.
describe('storage/postgres removals', () => {
  const tray = useTray();

  it('computes the post and comment records again without reading a table whole', async () => {
    await tray.writes.applyMemberships(
      [join('c-hike', 'u-ana', 0), join('c-hike', 'u-ben', 0), join('c-hike', 'u-cid', 0)],
      tray.context(),
    );
    // Ben away since, Dee known by a leave only: both hold an away span, not an interval.
    await tray.writes.applyMemberships(
      [leave('c-hike', 'u-ben', 5), leave('c-hike', 'u-dee', 0)],
      tray.context(),
    );
    const deleted = post('c-hike', 'u-cid', 1);
    await tray.writes.fanOutPosts('c-hike', [deleted], tray.context());
    await tray.writes.applyPersonal([comment(deleted.lastActionId, 'u-ben', 2, 'u-cid')], tray.context());

    const statements: SqlQuery[] = [];
    const client = await tray.pg.pool.connect();
    try {
      await client.query('BEGIN');
      // Every statement with its values, in either form the adapter sends (text and values, or a config).
      const recording = new Proxy(client, {
        get(target, property, receiver) {
          if (property !== 'query') return Reflect.get(target, property, receiver) as unknown;
          return (first: string | SqlQuery, values?: unknown[]) => {
            statements.push(
              typeof first === 'string'
                ? { text: first, values: values ?? [] }
                : { text: first.text, values: first.values ?? [] },
            );
            return target.query(first as string, values);
          };
        },
      });
      const applied = await applyRemovals(
        recording,
        [
          {
            kind: 'post',
            id: deleted.lastActionId,
            postId: deleted.lastActionId,
            at: at(3),
            communityId: 'c-hike',
          },
        ],
        { now: tray.context().now, retentionMs: RETENTION_MS },
      );
      expect(applied.voided).to.be.above(0);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
    const sent = statements.map((statement) => statement.text).join('\n');
    for (const table of ['tray_records', 'tray_memberships', 'tray_member_away'])
      expect(sent, table).to.include(table);
    for (const statement of statements) {
      const plan = await planOf(tray.pg.pool, statement);
      expect(plan.readWhole, statement.text).to.deep.equal([]);
    }
  });
});

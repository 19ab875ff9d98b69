import { expect } from 'chai';
import { DELETED_USER_NAME } from '../../../../tray-service/domain/activity.ts';
import { applyRemovals } from '../../../../tray-service/storage/postgres/apply-removals.ts';
import { lockKeys, profileLock } from '../../../../tray-service/storage/postgres/lock-keys.ts';
import type { SqlQuery } from '../../../../tray-service/storage/postgres/sql-conditions.ts';
import { aroundClient } from './around-queries.ts';
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
      // Every statement with its values.
      const recording = aroundClient(client, (statement, run) => {
        statements.push(statement);
        return run();
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

// A post deleted in a community of a hundred thousand members computed every record again in one
// statement: 18 s on a 2-vCPU VM, past PG_STATEMENT_TIMEOUT_MS, so the deletion failed every try.
describe('storage/postgres removals in a large community', () => {
  const tray = useTray();

  it('computes the members’ records again a part of them at a time: each once, the same as in one go', async () => {
    const ids = Array.from({ length: 25 }, (_, n) => `m${String(n).padStart(2, '0')}`);
    const shapes = async (communityId: string) => {
      await tray.writes.applyMemberships(
        [...ids.map((userId) => join(communityId, userId, 0)), leave(communityId, 'm11', 3)],
        tray.context(),
      );
      // Ids of their own: the first community's deletion leaves a tombstone of its post's id.
      const posts = [
        post(communityId, 'm07', 1, `${communityId}-p1`),
        post(communityId, 'm20', 2, `${communityId}-p2`),
        post(communityId, 'm30', 4, `${communityId}-p4`),
      ];
      await tray.writes.fanOutPosts(communityId, posts, tray.context());
      return {
        kind: 'post' as const,
        id: posts[1]!.lastActionId,
        postId: posts[1]!.lastActionId,
        at: at(5),
        communityId,
      };
    };
    const removeIn = async (communityId: string, membersPerStatement?: number) => {
      const removal = await shapes(communityId);
      const recomputes: number[] = [];
      const client = await tray.pg.pool.connect();
      try {
        await client.query('BEGIN');
        const counting = aroundClient(client, async ({ text }, run) => {
          const result = await run();
          if (text.startsWith('WITH grp AS')) recomputes.push(result.rowCount ?? 0);
          return result;
        });
        const applied = await applyRemovals(counting, [removal], {
          now: tray.context().now,
          retentionMs: RETENTION_MS,
          ...(membersPerStatement === undefined ? {} : { membersPerStatement }),
        });
        await client.query('COMMIT');
        return { applied, recomputes };
      } finally {
        client.release();
      }
    };
    const parts = await removeIn('c-parts', 10);
    expect(parts.recomputes.length, 'statements computing records again').to.be.at.least(3);
    expect(Math.max(...parts.recomputes), 'records of one statement').to.be.at.most(10);
    const whole = await removeIn('c-whole');
    expect(whole.recomputes.length).to.equal(1);
    const users = (list: readonly { userId: string }[]) => list.map((record) => record.userId).sort();
    expect(users(parts.applied.written)).to.deep.equal(users(whole.applied.written));
    expect(users(parts.applied.removed)).to.deep.equal(users(whole.applied.removed));
    expect(users(parts.applied.written).length, 'records changed').to.equal(24);
    for (const userId of [...ids, 'm30']) {
      const [a, b] = [
        await tray.record(userId, 'post', 'c-parts'),
        await tray.record(userId, 'post', 'c-whole'),
      ];
      expect(
        a && { ...a, key: '', targetId: '', feed: null, lastActionId: a.lastActionId.replace('c-parts', '') },
        userId,
      ).to.deep.equal(
        b && { ...b, key: '', targetId: '', feed: null, lastActionId: b.lastActionId.replace('c-whole', '') },
      );
    }
  });
});

// A comment deleted beside its author's account (both sent at once when an account goes): the
// removal put the author back among the group's actors from a kept action it read before the
// deletion's rename committed, and the deletion's rename, its snapshot older than that row, never
// saw it: the group's next record named the deleted user again, with their image.
describe('storage/postgres removals beside a user deletion', () => {
  const tray = useTray();

  it('never puts a deleted actor back under their old name', async function () {
    this.timeout(30_000);
    await tray.writes.applyPersonal(
      [comment('p-gone', 'u-dana', 1, 'u-ana'), comment('p-gone', 'u-dana', 2, 'u-ana')],
      tray.context(),
    );
    const second = (
      await tray.pg.pool.query<{ action_id: string }>(
        "SELECT action_id FROM tray_group_actions WHERE target_id = 'p-gone' ORDER BY at DESC LIMIT 1",
      )
    ).rows[0]?.action_id;
    if (!second) throw new Error('no kept action');
    const removal = await tray.pg.pool.connect();
    const deletion = await tray.pg.pool.connect();
    const watcher = await tray.pg.pool.connect();
    try {
      // The removal has refolded the actor from their kept action, not committed yet.
      await removal.query('BEGIN');
      await applyRemovals(removal, [{ kind: 'comment', id: second, postId: 'p-gone', at: at(3) }], {
        now: tray.context().now,
        retentionMs: RETENTION_MS,
      });
      // The deletion's transaction, as applyProfiles runs it: the profile's lock, then the renames.
      await deletion.query('BEGIN');
      const renamed = (async () => {
        await lockKeys(deletion, [profileLock('u-dana')]);
        for (const table of ['tray_target_actors', 'tray_group_actions'])
          await deletion.query(
            `UPDATE ${table} SET name = $1, image_url = NULL, avatar_custom_url = NULL, actor_deleted = true
             WHERE actor_id = 'u-dana'`,
            [DELETED_USER_NAME],
          );
        await deletion.query('COMMIT');
      })();
      // It waits on the removal (its lock, or the rows the removal replaced), then goes on.
      for (let waited = 0; ; waited += 20) {
        const { rows } = await watcher.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        );
        if ((rows[0]?.n ?? 0) > 0) break;
        if (waited > 10_000) throw new Error('the deletion never waited for the removal');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await removal.query('COMMIT');
      await renamed;
    } finally {
      await removal.query('ROLLBACK').catch(() => undefined);
      await deletion.query('ROLLBACK').catch(() => undefined);
      removal.release();
      deletion.release();
      watcher.release();
    }
    const { rows } = await tray.pg.pool.query<{ name: string; actor_deleted: boolean }>(
      "SELECT name, actor_deleted FROM tray_target_actors WHERE target_id = 'p-gone' AND actor_id = 'u-dana'",
    );
    expect(rows).to.deep.equal([{ name: DELETED_USER_NAME, actor_deleted: true }]);
  });
});

interface AnalysedNode {
  'Relation Name'?: string;
  Alias?: string;
  'Actual Loops'?: number;
  Plans?: AnalysedNode[];
}

// Each member's record read the group's newest actors on its own: wherever the planner took the
// actors' table for a few rows (statistics from before it grew), that was a scan of the whole
// group per member, and a post deleted in a community of 100,000 took 36 s instead of 12.
describe('storage/postgres removals computing many records again', () => {
  const tray = useTray();

  it('reads the group’s actors once per statement, not once per record', async () => {
    const ids = Array.from({ length: 25 }, (_, n) => `a${String(n).padStart(2, '0')}`);
    await tray.writes.applyMemberships(
      ids.map((userId) => join('c-once', userId, 0)),
      tray.context(),
    );
    const posts = [post('c-once', 'a03', 1), post('c-once', 'a09', 2), post('c-once', 'a17', 3)];
    await tray.writes.fanOutPosts('c-once', posts, tray.context());
    const newest = posts[2]!.lastActionId;
    const client = await tray.pg.pool.connect();
    const recomputes: SqlQuery[] = [];
    try {
      await client.query('BEGIN');
      const recording = aroundClient(client, (statement, run) => {
        if (statement.text.startsWith('WITH grp AS')) recomputes.push(statement);
        return run();
      });
      const applied = await applyRemovals(
        recording,
        [{ kind: 'post', id: newest, postId: newest, at: at(4), communityId: 'c-once' }],
        { now: tray.context().now, retentionMs: RETENTION_MS },
      );
      expect(applied.written.length, 'records computed again').to.be.at.least(20);
      const [recompute] = recomputes;
      if (!recompute) throw new Error('no statement computed the records again');
      const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: AnalysedNode }] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${recompute.text}`,
        recompute.values,
      );
      const reads: { alias: string; loops: number }[] = [];
      const walk = (node: AnalysedNode) => {
        // `own`: each record's recipient's own entry, one primary-key probe per record.
        if (node['Relation Name'] === 'tray_target_actors' && node.Alias !== 'own')
          reads.push({ alias: node.Alias ?? '', loops: node['Actual Loops'] ?? 0 });
        for (const child of node.Plans ?? []) walk(child);
      };
      walk(rows[0]!['QUERY PLAN'][0].Plan);
      expect(reads, 'reads of the group actors').to.not.deep.equal([]);
      for (const read of reads) expect(read.loops, `${read.alias}: loops`).to.be.at.most(1);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });
});

// The records' actors come from the group's newest four: a recipient among them, or a record
// counting from inside them (a late join), takes fewer than four's first three.
describe('storage/postgres removals naming the actors left', () => {
  const tray = useTray();

  it('names the actors a fan-out without the deleted post would have named, for posters and late joiners alike', async () => {
    const ids = Array.from({ length: 10 }, (_, n) => `b${String(n).padStart(2, '0')}`);
    const shape = async (communityId: string, withNewest: boolean) => {
      await tray.writes.applyMemberships(
        [...ids.map((userId) => join(communityId, userId, 0)), join(communityId, 'b-late', 3.5)],
        tray.context(),
      );
      const posts = [1, 2, 3, 4, 5, ...(withNewest ? [6] : [])].map((n) =>
        post(communityId, `b0${n}`, n, `${communityId}-b0${n}`),
      );
      await tray.writes.fanOutPosts(communityId, posts, tray.context());
    };
    await shape('c-cut', true);
    await shape('c-fresh', false);
    await tray.writes.applyRemovals?.(
      [{ kind: 'post', id: 'c-cut-b06', postId: 'c-cut-b06', at: at(7), communityId: 'c-cut' }],
      tray.context(),
    );
    const named = (record: Awaited<ReturnType<typeof tray.record>>, communityId: string) =>
      record && {
        actors: record.actors.map((actor) => actor.userId),
        actorsCount: record.actorsCount,
        lastActionId: record.lastActionId.replace(communityId, ''),
      };
    for (const userId of [...ids, 'b-late']) {
      expect(named(await tray.record(userId, 'post', 'c-cut'), 'c-cut'), userId).to.deep.equal(
        named(await tray.record(userId, 'post', 'c-fresh'), 'c-fresh'),
      );
    }
    expect(named(await tray.record('b-late', 'post', 'c-cut'), 'c-cut')).to.deep.equal({
      actors: ['b05', 'b04'],
      actorsCount: 2,
      lastActionId: '-b05',
    });
    expect(named(await tray.record('b04', 'post', 'c-cut'), 'c-cut')).to.deep.include({
      actors: ['b05', 'b03', 'b02'],
      actorsCount: 4,
    });
  });
});

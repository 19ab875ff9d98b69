import { expect } from 'chai';
import type pg from 'pg';
import { migrate } from '../../../../tray-service/storage/postgres/migrate.ts';
import {
  PURGE_GRACE_MS,
  purgeExpiredRecords,
} from '../../../../tray-service/storage/postgres/purge-expired-records.ts';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { usePostgres } from '../../../support/use-postgres.ts';
import { waitFor } from '../../../support/wait-for.ts';
import { planOf, recordingPool } from './plan-of.ts';
import { at, comment, post, RETENTION_MS, useTray } from './tray-fixture.ts';

describe('storage/postgres purgeExpiredRecords', () => {
  const pg = usePostgres();
  before(async () => {
    await migrate(pg.pool);
  });

  // Without an index a batch of 1,000 scans and sorts the whole table: on tray_records about
  // 58 ms at 400,000 records and 272 ms at 2 million, past the statement timeout at ~70 million.
  it("reads each table's expired rows from its expiry index, oldest first: no sequential scan, no sort", async () => {
    const recording = recordingPool(pg.pool);
    await purgeExpiredRecords(recording.pool, new Date());
    const tableOf = (text: string) => /^(?:DELETE FROM|-- purge) (\w+)/.exec(text.trim())?.[1] ?? text;
    const kept = [
      'tray_target_actors',
      'tray_community_posts',
      'tray_personal_actions',
      'tray_group_actions',
    ];
    expect(recording.statements.map((statement) => tableOf(statement.text))).to.deep.equal([
      'tray_records',
      'tray_target_actors',
      'tray_community_posts',
      'tray_personal_actions',
      'tray_group_actions',
      'tray_removals',
      'tray_removal_outcomes',
      'tray_removal_changes',
      'tray_mutes',
    ]);
    for (const statement of recording.statements) {
      const table = tableOf(statement.text);
      const plan = await planOf(pg.pool, statement);
      // An index scan, not an index-only one: the batch locks each row it reads (SKIP LOCKED).
      expect(plan.indexScans, `${table}: ${plan.nodes.join(' > ')}`).to.deep.include({
        node: 'Index Scan',
        index: `${table}_expiry`,
      });
      expect(plan.nodes, table).not.to.include('Seq Scan');
      expect(plan.nodes, table).not.to.include('Sort');
      // A kept row's group: its newest actor, one row read from the index in its order.
      if (kept.includes(table)) expect(plan.indexes, table).to.include('tray_target_actors_newest');
      // A tombstone: its post's kept actions, and a deleted post's community's newest actor.
      if (table === 'tray_removals') {
        expect(plan.indexes, table).to.include('tray_target_actors_newest');
        // tray_group_actions_post or its (post_id, action_id) sibling: both lead with post_id.
        expect(
          plan.indexes.filter((index) => index.startsWith('tray_group_actions_post')),
          table,
        ).to.have.length(1);
      }
      // An ended mute span: its owner's records, through an index that leads with user_id.
      if (table === 'tray_mutes')
        expect(
          plan.indexes.filter(
            (index) => index.startsWith('tray_records_') && !/_(expiry|snooze_due)$/.test(index),
          ),
          table,
        ).to.have.length(1);
    }
  });
});

describe('storage/postgres purgeExpiredRecords of kept actions', () => {
  const tray = useTray();
  const day = (n: number) => at(0) + n * DAY_MS;
  const rowsOf = async (table: string, target: string) =>
    (
      await tray.pg.pool.query<{ actor_id: string; expires_at: string }>(
        `SELECT actor_id, expires_at FROM ${table} WHERE target_id = $1 ORDER BY actor_id`,
        [target],
      )
    ).rows.map((row) => [row.actor_id, Number(row.expires_at)]);

  // Kept actions live as long as a record built from them can (docs/storage.md): a group's rows go
  // once its newest actor expired, and a live group's expired rows move to its expiry, so the purge
  // neither grows storage for ever nor reads the same kept rows again every hour.
  it("deletes a group's kept rows once its newest actor expired, moves a live group's to that expiry", async () => {
    await tray.pg.pool.query('TRUNCATE tray_group_actions');
    await tray.writes.applyPersonal(
      [
        { ...comment('p-over', 'u-ben', 0), at: day(0) },
        { ...comment('p-live', 'u-ben', 0), at: day(0), lastActionId: 'cm-live-ben' },
      ],
      tray.context(day(0)),
    );
    await tray.writes.applyPersonal(
      [
        { ...comment('p-over', 'u-cy', 0), at: day(10) },
        { ...comment('p-live', 'u-dee', 0), at: day(80), lastActionId: 'cm-live-dee' },
      ],
      tray.context(day(80)),
    );
    const now = new Date(day(101) + PURGE_GRACE_MS);
    // Batches of one: each round either deletes or moves the row it read, so the loop ends.
    await purgeExpiredRecords(tray.pg.pool, now, 1);
    for (const table of ['tray_target_actors', 'tray_group_actions']) {
      expect(await rowsOf(table, 'p-over'), table).to.deep.equal([]);
      expect(await rowsOf(table, 'p-live'), table).to.deep.equal([
        ['u-ben', day(80) + RETENTION_MS],
        ['u-dee', day(80) + RETENTION_MS],
      ]);
    }
    await purgeExpiredRecords(tray.pg.pool, new Date(day(80) + RETENTION_MS + PURGE_GRACE_MS), 1);
    for (const table of ['tray_target_actors', 'tray_group_actions'])
      expect(await rowsOf(table, 'p-live'), table).to.deep.equal([]);
  });
});

describe('storage/postgres purgeExpiredRecords beside a grouped upsert', () => {
  const tray = useTray();

  // The upsert UPDATEs a record its snapshot read as live and never re-inserts it (a record
  // delete-all removed meanwhile stays deleted). A purge whose clock runs a little ahead of the
  // writer's (another instance, a `now` taken before the statement) must therefore not delete a
  // record the writer still reads as live, or the new action is lost with no record at all.
  it('keeps a record the writer still reads as live when the purge clock is a second ahead', async () => {
    await tray.writes.applyPersonal([comment('p-1', 'u-cid', 1)], tray.context(at(1)));
    const expiresAt = at(1) + RETENTION_MS;
    const now = expiresAt - 1_000;
    const purger = await tray.pg.pool.connect();
    try {
      await purger.query('BEGIN');
      // The purge's statements, held uncommitted: the upsert meets its row locks.
      const inTransaction = {
        query: (text: string, values: unknown[] = []) => purger.query(text, values),
      } as unknown as pg.Pool;
      await purgeExpiredRecords(inTransaction, new Date(expiresAt + 1_000));
      const writing = tray.writes.applyPersonal(
        [{ ...comment('p-1', 'u-dee', 0), at: now - 500, lastActionId: 'cm-new' }],
        tray.context(now),
      );
      const waitingForPurge = waitFor(
        async () =>
          (
            await tray.pg.pool.query(
              `SELECT 1 FROM pg_stat_activity WHERE datname = current_database()
                 AND wait_event_type = 'Lock' AND query LIKE '-- tray: grouped upsert%'`,
            )
          ).rowCount === 1,
        5_000,
        'the upsert to finish or wait for the purge',
      );
      // Either the purge left the record alone (the upsert finishes) or it holds it deleted.
      await Promise.race([writing, waitingForPurge]);
      await purger.query('COMMIT');
      await writing;
    } finally {
      purger.release();
    }
    const record = await tray.record('u-ana', 'comment', 'p-1', now);
    expect(record?.actors.map((actor) => actor.userId)).to.deep.equal(['u-dee', 'u-cid']);
    expect(tray.told.map((told) => told.key)).to.include('comment_p-1_u-ana');
    // The group's actors are counted from their rows whatever their expiry: a later write at the
    // same clock still counts u-cid, whose action is within the retention at that clock.
    await tray.writes.applyPersonal(
      [{ ...comment('p-1', 'u-eve', 0), at: now - 100, lastActionId: 'cm-newer' }],
      tray.context(now),
    );
    const again = await tray.record('u-ana', 'comment', 'p-1', now);
    expect(again?.actors.map((actor) => actor.userId)).to.deep.equal(['u-eve', 'u-dee', 'u-cid']);
    expect(again?.actorsCount).to.equal(3);
  });
});

describe('storage/postgres purgeExpiredRecords of ended mute spans', () => {
  const tray = useTray();
  const day = (n: number) => at(0) + n * DAY_MS;
  const spans = async () =>
    (
      await tray.pg.pool.query<{ user_id: string; created_at: string; expires_at: string }>(
        'SELECT user_id, created_at, expires_at FROM tray_mutes ORDER BY user_id, created_at',
      )
    ).rows.map((row) => [row.user_id, Number(row.created_at), Number(row.expires_at)]);

  // A span ended over the retention ago still holds back what it covered while a record of its
  // owner that counts from before its end lives (docs/storage.md): it moves to that record's
  // expiry, and goes once no such record lives.
  it("moves a span to the expiry of its owner's records that count from before its end, deletes the others", async () => {
    await tray.pg.pool.query('TRUNCATE tray_mutes');
    await tray.writes.applyPersonal([{ ...comment('p-1', 'u-ben', 0), at: day(0) }], tray.context(day(0)));
    await tray.writes.applyPersonal(
      [{ ...comment('p-1', 'u-cy', 0), at: day(80), lastActionId: 'cm-cy' }],
      tray.context(day(80)),
    );
    const span = (user: string, from: number, to: number) =>
      tray.pg.pool.query(
        `INSERT INTO tray_mutes (user_id, target_type, target_id, created_at, until_at, removed_at, expires_at)
         VALUES ($1, 'post', 'p-1', $2, NULL, $3, $3::bigint + $4)`,
        [user, from, to, RETENTION_MS],
      );
    await span('u-ana', day(1), day(3)); // inside Ana's record (from day 0, expires day 170)
    await span('u-ana', day(-9), day(-5)); // ended before her record counts from
    await span('u-zed', day(1), day(3)); // no record at all
    await purgeExpiredRecords(tray.pg.pool, new Date(day(95) + PURGE_GRACE_MS), 1);
    expect(await spans()).to.deep.equal([['u-ana', day(1), day(80) + RETENTION_MS]]);
    await purgeExpiredRecords(tray.pg.pool, new Date(day(80) + RETENTION_MS + PURGE_GRACE_MS), 1);
    expect(await spans()).to.deep.equal([]);
  });
});

describe('storage/postgres purgeExpiredRecords of tombstones', () => {
  const tray = useTray();
  const day = (n: number) => at(0) + n * DAY_MS;

  // A tombstone voids what arrives after it as long as something could take that action again
  // (docs/storage.md): its post's thread keeps actions, or a deleted post's community's post group
  // lives. Then it moves to their expiry; else it goes.
  it('moves a tombstone on a live thread or of a post in a live community to their expiry, deletes the others', async () => {
    await tray.pg.pool.query('TRUNCATE tray_removals, tray_group_actions, tray_target_actors');
    // A live thread on p-live (comments on day 0 and 80) and a community post group in c-hike.
    await tray.writes.applyPersonal([{ ...comment('p-live', 'u-ben', 0), at: day(0) }], tray.context(day(0)));
    await tray.writes.applyPersonal(
      [{ ...comment('p-live', 'u-cy', 0), at: day(80), lastActionId: 'cm-live-cy' }],
      tray.context(day(80)),
    );
    await tray.writes.fanOutPosts(
      'c-hike',
      [{ ...post('c-hike', 'u-dee', 0), at: day(70) }],
      tray.context(day(70)),
    );
    const tombstone = (kind: string, id: string, postId: string, communityId: string | null) =>
      tray.pg.pool.query(
        `INSERT INTO tray_removals (post_id, kind, id, at, expires_at, community_id) VALUES ($1, $2, $3, $4, $5, $6)`,
        [postId, kind, id, day(1), day(1) + RETENTION_MS, communityId],
      );
    await tombstone('comment', 'cm-on-live', 'p-live', null);
    await tombstone('post', 'p-in-hike', 'p-in-hike', 'c-hike');
    await tombstone('comment', 'cm-on-over', 'p-over', null);
    await tombstone('post', 'p-in-over', 'p-in-over', 'c-over');
    await tombstone('post', 'p-on-feed', 'p-on-feed', null);
    const left = async () =>
      (
        await tray.pg.pool.query<{ id: string; expires_at: string }>(
          'SELECT id, expires_at FROM tray_removals ORDER BY id',
        )
      ).rows.map((row) => [row.id, Number(row.expires_at)]);
    await purgeExpiredRecords(tray.pg.pool, new Date(day(95) + PURGE_GRACE_MS), 1);
    expect(await left()).to.deep.equal([
      ['cm-on-live', day(80) + RETENTION_MS],
      ['p-in-hike', day(70) + RETENTION_MS],
    ]);
    await purgeExpiredRecords(tray.pg.pool, new Date(day(80) + RETENTION_MS + PURGE_GRACE_MS), 1);
    expect(await left()).to.deep.equal([]);
  });
});

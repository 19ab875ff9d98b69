import { expect } from 'chai';
import pg from 'pg';
import { createPostgresInbox } from '../../../../tray-service/storage/postgres/postgres-inbox.ts';
import { createPostgresRecords } from '../../../../tray-service/storage/postgres/postgres-records.ts';
import { planOf, recordingPool } from './plan-of.ts';
import { NOW, useTray } from './tray-fixture.ts';
import { waitFor } from '../../../support/wait-for.ts';
import { encodeRecordKey } from '../../../../tray-service/domain/record-key.ts';

// What only PostgreSQL shows of the inbox (its behaviour is in the storage conformance suite):
// every statement the inbox and the platform's reads send is served by an index, the counts by
// their partial indexes without a clock comparison.
describe('storage/postgres inbox (InboxPort): the indexes serve every statement', () => {
  const tray = useTray();
  const captured: { text: string; values: unknown[] }[] = [];

  beforeEach(async () => {
    const { pool } = tray.pg;
    // u-heavy: 1,200 records, a third archived, a tenth snoozed; beside 500 users' records.
    await pool.query(
      `INSERT INTO tray_records (user_id, key, verb, target_id, target_type, target_name, last_action_id,
         feed, actors, actors_count, count_from, last_update, has_read, unread_at, changed_at, expires_at,
         archived_at, snoozed_until)
       SELECT u, tray_record_key('comment', 'p' || i, u), 'comment', 'p' || i, 'post', 'Club', 'a' || i,
         '{"kind":"community","id":"c","name":"Club"}', '[]', 1, $1::bigint + i, $1::bigint + i, i % 3 = 0,
         $1::bigint + i, $1::bigint + i, $1::bigint + i + 7776000000,
         CASE WHEN i % 3 = 1 THEN $1::bigint END, CASE WHEN i % 10 = 2 THEN $1::bigint + 600000 + i END
       FROM (SELECT i, CASE WHEN i <= 1200 THEN 'u-heavy' ELSE 'u' || (i % 500) END AS u
             FROM generate_series(1, 50000) AS i) AS s`,
      [NOW - 60_000],
    );
    await pool.query('ANALYZE tray_records');
    captured.length = 0;
    const recording = {
      query: (query: string | { text: string; values: unknown[] }, values?: unknown[]) => {
        captured.push(typeof query === 'string' ? { text: query, values: values ?? [] } : query);
        return typeof query === 'string' ? pool.query(query, values) : pool.query(query);
      },
    } as unknown as pg.Pool;
    const inbox = createPostgresInbox(recording);
    const records = createPostgresRecords(recording);
    for (const view of ['inbox', 'archived', 'snoozed', 'all'] as const)
      await inbox.page('u-heavy', view, undefined, 10, NOW);
    await inbox.countUnseen('u-heavy', NOW);
    await records.countUnread('u-heavy', 'recorded', NOW);
    await records.pageNumber('u-heavy', 2, 10, NOW, ['mention']);
    await records.count('u-heavy', NOW);
    await inbox.mark('u-heavy', { kind: 'seen', ids: 'all' }, NOW);
    await inbox.mark('u-heavy', { kind: 'archive', ids: ['x', 'y'] }, NOW);
    await inbox.mark('u-heavy', { kind: 'archive', ids: 'all', readOnly: true }, NOW);
    await inbox.seeThrough('u-heavy', NOW);
    await inbox.wakeDue(NOW - 60_000 + 600_000 + 50, 100);
    await inbox.mutesInForce('u-heavy', NOW);
    for (const view of ['inbox', 'archived', 'snoozed', 'all'] as const)
      await inbox.countView('u-heavy', view, NOW);
    await inbox.countInboxes(['u-heavy', 'u7', 'u-nobody'], NOW);
  });

  const planned = async (index: number) => {
    const query = captured[index];
    if (!query) throw new Error(`no statement ${index} captured`);
    return planOf(tray.pg.pool, query);
  };

  it('pages each view from its own newest-first index, without sorting', async () => {
    const names = [
      'tray_records_inbox_page',
      'tray_records_archived_page',
      'tray_records_snoozed_page',
      'tray_records_page',
    ];
    for (const [index, name] of names.entries()) {
      const plan = await planned(index);
      expect(plan.indexes, name).to.include(name);
      expect(plan.nodes).not.to.include.members(['Seq Scan', 'Sort']);
    }
  });

  it('counts unseen and unread from the inbox partial indexes', async () => {
    const statements = captured.slice(4, 6);
    expect(statements.map((query) => query.text)).to.satisfy((texts: string[]) =>
      texts.every((text) => !/\bnow\(\)|clock_timestamp/.test(text)),
    );
    // The last-read time is read by the same statement, as the unread count reads it.
    expect((await planned(4)).indexes).to.include('tray_records_inbox_unseen');
    expect((await planned(4)).nodes).not.to.include('Seq Scan');
    expect((await planned(5)).indexes).to.include('tray_records_inbox_unread');
  });

  it("serves v2's page and the history count from the inbox page index", async () => {
    expect((await planned(6)).indexes).to.deep.equal(['tray_records_inbox_page']);
    expect((await planned(7)).indexes).to.deep.equal(['tray_records_inbox_page']);
  });

  it("marks by the user's indexes (by ids: the primary key), never a sequential scan", async () => {
    for (const index of [8, 9, 10, 11]) {
      const plan = await planned(index);
      expect(plan.nodes).not.to.include('Seq Scan');
      expect(plan.indexes).not.to.deep.equal([]);
    }
    expect((await planned(9)).indexes).to.include('tray_records_pkey');
  });

  it('claims due snoozes by the snooze index, and lists mutes by their key', async () => {
    expect((await planned(12)).indexes).to.include('tray_records_snooze_due');
    expect((await planned(13)).indexes).to.deep.equal(['tray_mutes_pkey']);
  });

  it("counts each view's records (totalPages) by the user's indexes, the partial ones for their views", async () => {
    // The snoozed view may count by the snooze index instead, as partial on the same condition.
    const names = ['tray_records_inbox_page', 'tray_records_archived_page'];
    for (const [index, name] of names.entries())
      expect((await planned(14 + index)).indexes, name).to.include(name);
    for (const index of [14, 15, 16, 17]) {
      const plan = await planned(index);
      expect(plan.nodes).not.to.include('Seq Scan');
      expect(plan.indexes).not.to.deep.equal([]);
    }
  });

  it("counts many users' inboxes in one statement, each count by its user's partial index", async () => {
    const plan = await planned(18);
    expect(plan.indexes).to.include.members(['tray_records_inbox_unseen', 'tray_records_inbox_unread']);
    expect(plan.nodes).not.to.include('Seq Scan');
  });

  it("counts many users' inboxes as each user's own counts do", async () => {
    const { pool } = tray.pg;
    await pool.query(`INSERT INTO tray_last_read (user_id, at) VALUES ('u7', $1)`, [NOW - 60_000 + 25_000]);
    const inbox = createPostgresInbox(pool);
    const records = createPostgresRecords(pool);
    const users = ['u-heavy', 'u7', 'u8', 'u-nobody'];
    const counts = await inbox.countInboxes([...users, 'u7'], NOW);
    for (const user of users) {
      expect(counts?.get(user), user).to.deep.include({
        unread: await records.countUnread(user, 'recorded', NOW),
        unseen: await inbox.countUnseen(user, NOW),
      });
    }
    expect(counts?.get('u7')?.unread)
      .to.be.above(0)
      .and.below(counts?.get('u8')?.unread ?? 0);
    expect(counts?.get('u-nobody')).to.deep.equal({ unread: 0, unseen: 0 });
  });

  it('woke exactly the due records, unread and unseen at their until', async () => {
    const { rows } = await tray.pg.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM tray_records WHERE user_id = 'u-heavy' AND snoozed_until IS NOT NULL`,
    );
    // Snoozes of u-heavy end at NOW + 540,000 + i for i = 2, 12, ...: those up to i = 50 woke.
    expect(rows[0]?.n).to.equal(120 - 5);
  });
});

// v2's last-read (seeThrough) and mark-all-as-read touch the unread or unseen records of every view.
// Said as they are, they imply neither partial index (each is on the inbox or outside it), and the
// planner read the user's whole tray by the primary key instead: 48 and 63 ms for a user with
// 50,000 records, 20 unread (measured), on every v2 last-read call.
describe('storage/postgres inbox: last-read and mark-all-as-read read only the unread records', () => {
  const tray = useTray();

  it('by the unseen and unread partial indexes, not the whole tray by its primary key', async () => {
    const { pool } = tray.pg;
    // u-read: 5,000 records, all read and seen but 5, a tenth archived; beside 300 users' records.
    await pool.query(
      `INSERT INTO tray_records (user_id, key, verb, target_id, target_type, target_name, last_action_id,
         feed, actors, actors_count, count_from, last_update, has_read, is_seen, unread_at, changed_at,
         expires_at, archived_at)
       SELECT u, tray_record_key('comment', 'p' || i, u), 'comment', 'p' || i, 'post', 'Club', 'a' || i,
         '{"kind":"community","id":"c","name":"Club"}', '[]', 1, $1::bigint + i, $1::bigint + i, i > 5, i > 5,
         $1::bigint + i, $1::bigint + i, $1::bigint + i + 7776000000,
         CASE WHEN i % 10 = 3 THEN $1::bigint END
       FROM (SELECT i, CASE WHEN i <= 5000 THEN 'u-read' ELSE 'u' || (i % 300) END AS u
             FROM generate_series(1, 30000) AS i) AS s`,
      [NOW - 60_000],
    );
    await pool.query('ANALYZE tray_records');
    const { pool: recording, statements } = recordingPool(pool);
    // Each plan as the server would choose it: bitmap scans allowed (they combine two indexes).
    const plan = async (query: { text: string; values: unknown[] }) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('SET LOCAL enable_seqscan = off');
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${query.text}`, query.values);
        return rows.map((row) => row['QUERY PLAN']).join('\n');
      } finally {
        await client.query('ROLLBACK');
        client.release();
      }
    };
    expect(await createPostgresInbox(recording).seeThrough('u-read', NOW)).to.equal(5);
    expect(await createPostgresRecords(recording).markAllRead('u-read', NOW)).to.have.lengthOf(5);
    const [seen, read] = await Promise.all(statements.map(plan));
    expect(seen)
      .to.include('tray_records_inbox_unseen')
      .and.not.include('Bitmap Index Scan on tray_records_pkey');
    expect(read)
      .to.include('tray_records_inbox_unread')
      .and.not.include('Bitmap Index Scan on tray_records_pkey');
  });
});

// A mark of all locks the inbox's records in key order; a worker's transaction writing new activity
// to one of them makes it wait, and once that commits the statement judged the record again on its
// new state (still in the inbox, unseen, unread) and marked it: the new activity was hidden before
// it was ever shown. Made here with the very write a delivery makes, held open by the test.
describe('storage/postgres inbox: a mark of all waiting for a record a delivery holds', () => {
  const tray = useTray();

  const marks = {
    'seen all': (pool: pg.Pool, userId: string) =>
      createPostgresInbox(pool).mark(userId, { kind: 'seen', ids: 'all' }, NOW),
    'archive all': (pool: pg.Pool, userId: string) =>
      createPostgresInbox(pool).mark(userId, { kind: 'archive', ids: 'all' }, NOW),
    'mark-all-as-read': (pool: pg.Pool, userId: string) =>
      createPostgresRecords(pool).markAllRead(userId, NOW),
  };

  for (const [name, mark] of Object.entries(marks)) {
    it(`${name} leaves the record the delivery made unread again`, async () => {
      const { pool } = tray.pg;
      const userId = `u-${name.replace(/\W/g, '-')}`;
      await pool.query(
        `INSERT INTO tray_records (user_id, key, verb, target_id, target_type, target_name, last_action_id,
           feed, actors, actors_count, count_from, last_update, has_read, is_seen, unread_at, changed_at,
           expires_at)
         SELECT $2, tray_record_key('comment', 'p' || i, $2), 'comment', 'p' || i, 'post', 'Club', 'a' || i,
           '{"kind":"community","id":"c","name":"Club"}', '[]', 1, $1::bigint + i, $1::bigint + i, false, false,
           $1::bigint + i, $1::bigint + i, $1::bigint + i + 7776000000
         FROM generate_series(1, 3) AS i`,
        [NOW - 60_000, userId],
      );
      const key = (n: number) => encodeRecordKey({ verb: 'comment', targetId: `p${n}`, userId });
      const delivered = key(2);
      const worker = await pool.connect();
      try {
        await worker.query('BEGIN');
        // What new activity on the record writes: unread again from the worker's clock, unseen.
        await worker.query(
          `UPDATE tray_records SET unread_at = $3, has_read = false, is_seen = false, changed_at = $3,
             actors_count = actors_count + 1
           WHERE user_id = $1 AND key = $2`,
          [userId, delivered, NOW - 1_000],
        );
        const marking = mark(pool, userId);
        await waitFor(
          async () => {
            const { rows } = await pool.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_stat_activity
             WHERE datname = current_database() AND wait_event_type = 'Lock'`,
            );
            return (rows[0]?.n ?? 0) > 0;
          },
          10_000,
          'the mark waiting for the record the delivery holds',
        );
        await worker.query('COMMIT');
        const marked = await marking;
        expect(marked.map((record) => record.key)).to.have.members([key(1), key(3)]);
      } finally {
        worker.release();
      }
      const { rows } = await pool.query<{ has_read: boolean; is_seen: boolean; archived_at: string | null }>(
        'SELECT has_read, is_seen, archived_at FROM tray_records WHERE user_id = $1 AND key = $2',
        [userId, delivered],
      );
      expect(rows).to.deep.equal([{ has_read: false, is_seen: false, archived_at: null }]);
    });
  }
});

// A live stream counts a change stamped SETTLE_MS before the newest it delivered as delivered: a
// wake-up stamped with the time its round began but written after seconds waiting for a busy pool
// was missed by a stream resuming from past that stamp, and the record never woke on it.
describe('storage/postgres inbox: a snooze wake-up that waited for a connection', () => {
  const tray = useTray();

  it('stamps the records it woke with the time it wrote them, past the time it was given', async () => {
    const { pool } = tray.pg;
    await pool.query(
      `INSERT INTO tray_records (user_id, key, verb, target_id, target_type, target_name, last_action_id,
         feed, actors, actors_count, count_from, last_update, unread_at, changed_at, expires_at, snoozed_until)
       SELECT u, tray_record_key('comment', 'p-late', u), 'comment', 'p-late', 'post', 'Club', 'a',
         '{"kind":"community","id":"c","name":"Club"}', '[]', 1, $1::bigint, $1::bigint, $1::bigint,
         $1::bigint, $1::bigint + 7776000000, $1::bigint + 10
       FROM unnest(ARRAY['u-one', 'u-two']) AS u`,
      [NOW - 60_000],
    );
    // A pool of one connection, held by another caller for 2.5 s: the wake-up waits for it.
    const busy = new pg.Pool({ connectionString: tray.pg.url, max: 1 });
    try {
      const holder = await busy.connect();
      const waitMs = 2_500;
      const waking = createPostgresInbox(busy).wakeDue(NOW, 10);
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      holder.release();
      const woken = await waking;
      expect(woken.map((record) => record.userId).sort()).to.deep.equal(['u-one', 'u-two']);
      for (const record of woken)
        expect(record.changedAt - NOW, record.userId).to.be.within(waitMs - 1_000 - 200, waitMs + 2_000);
      const stored = await pool.query<{ changed_at: string }>(
        "SELECT changed_at FROM tray_records WHERE key LIKE 'comment_p-late_%' ORDER BY user_id",
      );
      expect(stored.rows.map((row) => Number(row.changed_at)).sort()).to.deep.equal(
        woken.map((record) => record.changedAt).sort(),
      );
    } finally {
      await busy.end();
    }
  });
});

import { expect } from 'chai';
import type pg from 'pg';
import type { Activity } from '../../../../tray-service/domain/activity.ts';
import { createPostgresLatestTimes } from '../../../../tray-service/storage/postgres/postgres-latest-times.ts';
import { encodeRecordKey } from '../../../../tray-service/domain/record-key.ts';
import { createPostgresInbox } from '../../../../tray-service/storage/postgres/postgres-inbox.ts';
import { createPostgresRecords } from '../../../../tray-service/storage/postgres/postgres-records.ts';
import { at, comment, NOW, useTray } from './tray-fixture.ts';
import { waitFor } from '../../../support/wait-for.ts';

/** A mention of `userId` in a post by `author` (its own record, never grouped). */
function mention(postId: string, author: string, minutes: number, userId = 'u-ana'): Activity {
  return {
    ...comment(postId, author, minutes, userId),
    verb: 'mention',
    targetType: 'post',
    lastActionId: postId,
    mentionIn: 'post',
  };
}

describe('storage/postgres records (TrayRecordsPort)', () => {
  const tray = useTray();
  const personal = (activities: Activity[], now = NOW) =>
    tray.writes.applyPersonal(activities, tray.context(now));
  const keys = (records: { key: string }[]) => records.map((record) => record.key);
  /** The adapter over the suite's pool, counting the statements it sends (each one round trip). */
  const countingRecords = () => {
    let sent = 0;
    const { pool } = tray.pg;
    const counting = {
      query: (text: string, values: unknown[]) => ((sent += 1), pool.query(text, values)),
    };
    return { records: createPostgresRecords(counting as unknown as pg.Pool), statements: () => sent };
  };

  describe('read state', () => {
    it('marks all read while a writer holds one of the records and then asks for another: no deadlock reaches the caller', async () => {
      // Two records of Ana's; the one of lower key is the newer, so either index the statement
      // could walk (primary key or page) reaches it first.
      const [low, high] = ['p-1', 'p-2']
        .map((postId) => ({
          postId,
          key: encodeRecordKey({ verb: 'comment', targetId: postId, userId: 'u-ana' }),
        }))
        .sort((a, b) => (a.key < b.key ? -1 : 1));
      await personal([comment(high!.postId, 'u-cid', 1), comment(low!.postId, 'u-cid', 2)]);
      const writer = await tray.pg.pool.connect();
      try {
        await writer.query('BEGIN');
        const lock = (key: string) =>
          writer.query("SELECT 1 FROM tray_records WHERE user_id = 'u-ana' AND key = $1 FOR UPDATE", [key]);
        await lock(high!.key);
        const deadlocks = async () =>
          (
            await tray.pg.pool.query<{ n: number }>(
              'SELECT deadlocks::int AS n FROM pg_stat_database WHERE datname = current_database()',
            )
          ).rows[0]?.n ?? 0;
        const before = await deadlocks();
        const marking = tray.records.markAllRead('u-ana', NOW + 5);
        // markAllRead now holds the lower key and waits for the higher (seen waiting, not slept
        // for: asked before it held the lower, the writer would only queue); the writer then asks
        // for the lower: a cycle, which PostgreSQL breaks by aborting one of the two.
        await waitFor(
          async () =>
            (
              await tray.pg.pool.query(
                `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
              )
            ).rowCount === 1,
          5_000,
          'markAllRead to wait for the record the writer holds',
        );
        // PostgreSQL aborts the waiter whose check finds the cycle: markAllRead's, a second after
        // it began to wait, when the writer has asked by then; on a loaded machine the writer may
        // ask later, and then its own check finds the cycle and aborts the writer. Either way the
        // caller of markAllRead sees no deadlock.
        const writerAborted = await lock(low!.key).then(
          () => false,
          (error: { code?: string }) => {
            if (error.code !== '40P01') throw error;
            return true;
          },
        );
        await writer.query(writerAborted ? 'ROLLBACK' : 'COMMIT');
        expect(keys(await marking).sort()).to.deep.equal([low!.key, high!.key]);
        // The cycle did happen (and, when markAllRead was the one aborted, was retried inside it).
        await waitFor(async () => (await deadlocks()) === before + 1, 5_000, 'the deadlock to be counted');
      } finally {
        // Never back into the pool inside a transaction (an aborted one failed the next test).
        await writer.query('ROLLBACK').catch(() => undefined);
        writer.release();
      }
      expect(await tray.records.countUnread('u-ana', 0, NOW + 5)).to.equal(0);
    });

    // A live stream counts a change stamped SETTLE_MS before the newest it delivered as delivered:
    // a mark stamped when asked but committed after seconds behind a fan-out's locks was lost to it.
    it('stamps the records a mark waited for with the time it wrote them, past the time it was given', async () => {
      await personal([comment('p-1', 'u-cid', 1), comment('p-2', 'u-cid', 2), comment('p-3', 'u-cid', 3)]);
      // The writer holds the highest key: the mark locks (and writes) the lower ones first, in key
      // order, then waits; all of them become visible only when it commits.
      const keys = (await tray.records.pageAfter('u-ana', undefined, 10, NOW)).records
        .map((record) => record.key)
        .sort();
      const highest = keys.at(-1);
      const writer = await tray.pg.pool.connect();
      const waitMs = 2_500;
      const holdHighest = async () => {
        await writer.query('BEGIN');
        await writer.query("SELECT 1 FROM tray_records WHERE user_id = 'u-ana' AND key = $1 FOR UPDATE", [
          highest,
        ]);
      };
      try {
        await holdHighest();
        const marking = tray.records.markAllRead('u-ana', NOW + 5);
        await new Promise((resolve) => setTimeout(resolve, waitMs));
        await writer.query('COMMIT');
        const read = await marking;
        expect(read).to.have.lengthOf(3);
        // What it waited beyond a second, give or take: every record, those written before the wait too.
        for (const record of read)
          expect(record.changedAt - (NOW + 5), record.key).to.be.within(waitMs - 1_000 - 200, waitMs + 2_000);
        // As stored: what a stream resuming from there reads.
        const stored = await tray.records.byKeys('u-ana', keys, NOW);
        expect(stored.map((record) => record.changedAt).sort()).to.deep.equal(
          read.map((record) => record.changedAt).sort(),
        );
        // The inbox's marks alike.
        await holdHighest();
        const archiving = createPostgresInbox(tray.pg.pool).mark(
          'u-ana',
          { kind: 'archive', ids: 'all' },
          NOW + 1e5,
        );
        await new Promise((resolve) => setTimeout(resolve, waitMs));
        await writer.query('COMMIT');
        const archived = await archiving;
        expect(archived).to.have.lengthOf(3);
        for (const record of archived)
          expect(record.changedAt - (NOW + 1e5), record.key).to.be.within(
            waitMs - 1_000 - 200,
            waitMs + 2_000,
          );
        // Their changedBefore is still the state each replaced.
        expect(archived.map((record) => record.changedBefore).sort()).to.deep.equal(
          read.map((record) => record.changedAt).sort(),
        );
      } finally {
        await writer.query('ROLLBACK').catch(() => undefined);
        writer.release();
      }
      // A mark that waits for nothing keeps the time it was given.
      await personal([comment('p-4', 'u-cid', 4)], NOW + 10);
      const { changed } = await tray.records.markRead('u-ana', 'comment', 'p-4', NOW + 20);
      expect(changed.map((record) => record.changedAt)).to.deep.equal([NOW + 20]);
    });

    it('counts unread records whose unreadAt is after the last-read time, without those marked read', async () => {
      await personal([comment('p-1', 'u-cid', 1)], NOW);
      await personal([comment('p-2', 'u-cid', 2)], NOW + 10);
      await personal([comment('p-3', 'u-cid', 3)], NOW + 20);
      expect(await tray.records.countUnread('u-ana', 0, NOW)).to.equal(3);
      expect(await tray.records.countUnread('u-ana', NOW + 10, NOW)).to.equal(1);
      await tray.records.markRead('u-ana', 'comment', 'p-3', NOW + 30);
      expect(await tray.records.countUnread('u-ana', NOW + 10, NOW)).to.equal(0);
      expect(await tray.records.countUnread('u-bob', 0, NOW)).to.equal(0);
    });

    it("counts after the user's recorded last-read time when asked for 'recorded', in one statement", async () => {
      await personal([comment('p-1', 'u-cid', 1)], NOW);
      await personal([comment('p-2', 'u-cid', 2)], NOW + 10);
      const { records, statements } = countingRecords();
      expect(await records.countUnread('u-ana', 'recorded', NOW)).to.equal(2);
      await createPostgresLatestTimes(tray.pg.pool, 'tray_last_read').record('u-ana', NOW + 5);
      expect(await records.countUnread('u-ana', 'recorded', NOW)).to.equal(1);
      expect(await records.countUnread('u-bob', 'recorded', NOW)).to.equal(0);
      expect(statements()).to.equal(3);
    });

    it('marks one record read once: found, the changed record, then found with nothing changed', async () => {
      await personal([comment('p-1', 'u-cid', 1)]);
      const first = await tray.records.markRead('u-ana', 'comment', 'p-1', NOW + 5);
      expect(first.found).to.equal(true);
      expect(first.changed.map((record) => [record.key, record.hasRead, record.changedAt])).to.deep.equal([
        ['comment_p-1_u-ana', true, NOW + 5],
      ]);
      expect(await tray.records.markRead('u-ana', 'comment', 'p-1', NOW + 6)).to.deep.equal({
        found: true,
        changed: [],
      });
      expect(await tray.records.markRead('u-ana', 'comment', 'p-404', NOW)).to.deep.equal({
        found: false,
        changed: [],
      });
      expect(await tray.records.markRead('u-bob', 'comment', 'p-1', NOW)).to.deep.equal({
        found: false,
        changed: [],
      });
    });

    it('marks every unread record read and returns only those it changed', async () => {
      await personal([
        comment('p-1', 'u-cid', 1),
        comment('p-2', 'u-cid', 2),
        comment('p-3', 'u-cid', 3, 'u-bob'),
      ]);
      await tray.records.markRead('u-ana', 'comment', 'p-1', NOW + 1);
      const changed = await tray.records.markAllRead('u-ana', NOW + 2);
      expect(keys(changed)).to.deep.equal(['comment_p-2_u-ana']);
      expect(await tray.records.countUnread('u-ana', 0, NOW + 2)).to.equal(0);
      expect(await tray.records.countUnread('u-bob', 0, NOW + 2)).to.equal(1);
    });

    it('deletes the whole tray of one user, and new activity then counts afresh', async () => {
      await personal([
        comment('p-1', 'u-cid', 1),
        comment('p-2', 'u-cid', 2),
        comment('p-3', 'u-cid', 3, 'u-bob'),
      ]);
      expect(await tray.records.deleteAll('u-ana')).to.equal(2);
      expect(await tray.records.count('u-ana', NOW)).to.equal(0);
      expect(await tray.records.count('u-bob', NOW)).to.equal(1);
      await personal([comment('p-1', 'u-dee', 4)]);
      expect(await tray.records.countUnread('u-ana', 0, NOW)).to.equal(1);
      expect((await tray.record('u-ana', 'comment', 'p-1'))?.actorsCount).to.equal(1);
    });
  });

  describe('last read and delete-all times', () => {
    for (const table of ['tray_last_read', 'tray_clears'] as const) {
      it(`${table}: 0 before any, then the latest, never moving backwards`, async () => {
        const times = createPostgresLatestTimes(tray.pg.pool, table);
        expect(await times.latest('u-ana')).to.equal(0);
        await times.record('u-ana', NOW);
        await Promise.all([
          times.record('u-ana', NOW - 5),
          times.record('u-ana', NOW + 5),
          times.record('u-ana', NOW + 2),
        ]);
        expect(await times.latest('u-ana')).to.equal(NOW + 5);
        expect(await times.latest('u-bob')).to.equal(0);
      });
    }
  });

  describe('v3 pages by startAfter', () => {
    // Five records at minute 9, three sharing minute 5, two at 1 and 0.
    beforeEach(async () => {
      await personal([
        comment('p-a', 'u-cid', 9),
        comment('p-b', 'u-cid', 5),
        comment('p-c', 'u-cid', 5),
        comment('p-d', 'u-cid', 5),
        comment('p-e', 'u-cid', 1),
        comment('p-f', 'u-cid', 0),
      ]);
    });

    it('never splits records of equal lastUpdate across pages, and walks every record once', async () => {
      const first = await tray.records.pageAfter('u-ana', undefined, 2, NOW);
      expect(keys(first.records)).to.deep.equal([
        'comment_p-a_u-ana',
        'comment_p-d_u-ana',
        'comment_p-c_u-ana',
        'comment_p-b_u-ana',
      ]);
      expect(first.nextPage).to.equal(at(5));
      const second = await tray.records.pageAfter('u-ana', first.nextPage, 2, NOW);
      expect(keys(second.records)).to.deep.equal(['comment_p-e_u-ana', 'comment_p-f_u-ana']);
      expect(second.nextPage).to.equal(0);
      expect(await tray.records.pageAfter('u-ana', 0, 2, NOW)).to.deep.equal({ records: [], nextPage: 0 });
    });

    it('reads a page in one statement when its last group ends within a page’s length past it', async () => {
      const { records, statements } = countingRecords();
      const first = await records.pageAfter('u-ana', undefined, 2, NOW);
      expect(first.records).to.have.length(4);
      const second = await records.pageAfter('u-ana', first.nextPage, 2, NOW);
      expect(second.nextPage).to.equal(0);
      expect(statements()).to.equal(2);
    });

    it('reads on when the last group runs past that look-ahead, and still ends it whole', async () => {
      const { records, statements } = countingRecords();
      const page = await records.pageAfter('u-ana', at(6), 1, NOW);
      expect(keys(page.records)).to.deep.equal([
        'comment_p-d_u-ana',
        'comment_p-c_u-ana',
        'comment_p-b_u-ana',
      ]);
      expect(page.nextPage).to.equal(at(5));
      expect(statements()).to.equal(3);
    });

    it('treats startAfter 1 as the first page and ends with nextPage 0 when a group closes the history', async () => {
      const first = await tray.records.pageAfter('u-ana', 1, 5, NOW);
      expect(first.records).to.have.length(5);
      expect(first.nextPage).to.equal(at(1));
      const whole = await tray.records.pageAfter('u-ana', at(6), 1, NOW);
      expect(keys(whole.records)).to.deep.equal([
        'comment_p-d_u-ana',
        'comment_p-c_u-ana',
        'comment_p-b_u-ana',
      ]);
      expect(whole.nextPage).to.equal(at(5));
      const last = await tray.records.pageAfter('u-ana', at(1), 1, NOW);
      expect(keys(last.records)).to.deep.equal(['comment_p-f_u-ana']);
      expect(last.nextPage).to.equal(0);
    });
  });

  describe('v2 numbered pages', () => {
    it('pages the same order without the excluded verbs, counting them out too', async () => {
      await personal([comment('p-a', 'u-cid', 3), mention('p-m', 'u-dee', 2), comment('p-b', 'u-cid', 1)]);
      expect(keys(await tray.records.pageNumber('u-ana', 1, 1, NOW, ['mention']))).to.deep.equal([
        'comment_p-a_u-ana',
      ]);
      expect(keys(await tray.records.pageNumber('u-ana', 2, 1, NOW, ['mention']))).to.deep.equal([
        'comment_p-b_u-ana',
      ]);
      expect(await tray.records.pageNumber('u-ana', 3, 1, NOW, ['mention'])).to.deep.equal([]);
      expect(await tray.records.count('u-ana', NOW, ['mention'])).to.equal(2);
      expect(await tray.records.count('u-ana', NOW)).to.equal(3);
      const mentionRecord = await tray.record('u-ana', 'mention', 'p-m');
      expect(mentionRecord).to.deep.include({ mentionIn: 'post', key: 'mention_p-m_u-ana' });
    });
  });

  describe('changedSince', () => {
    it('returns the records changed after a time, oldest change first, marks included', async () => {
      await personal([comment('p-1', 'u-cid', 1)], NOW);
      await personal([comment('p-2', 'u-cid', 2)], NOW + 10);
      await tray.records.markRead('u-ana', 'comment', 'p-1', NOW + 20);
      const changed = await tray.records.changedSince('u-ana', NOW, NOW + 30);
      expect(changed.map((record) => [record.key, record.changedAt])).to.deep.equal([
        ['comment_p-2_u-ana', NOW + 10],
        ['comment_p-1_u-ana', NOW + 20],
      ]);
      expect(await tray.records.changedSince('u-ana', NOW + 20, NOW + 30)).to.deep.equal([]);
    });
  });

  describe('query plans at volume', function () {
    this.timeout(120_000);
    /** The statements the adapter runs, captured so their plans are read, not copies of them. */
    const captured: { name?: string; text: string; values: unknown[] }[] = [];
    /** The plan PostgreSQL runs a statement with; for a named (prepared) one, its generic plan too. */
    let plans: (query: { name?: string; text: string; values: unknown[] }) => Promise<string[]>;

    beforeEach(async () => {
      const { pool } = tray.pg;
      // 100,000 records of 500 users, and u-heavy with 1,200 records written within one minute;
      // then 40,000 light users with one record each, so the average user has few records, as on
      // a real network (a plan costed for the average user must still serve u-heavy well).
      await pool.query(
        `INSERT INTO tray_records (user_id, key, verb, target_id, target_type, target_name, last_action_id,
           feed, actors, actors_count, count_from, last_update, has_read, unread_at, changed_at, expires_at)
         SELECT u, tray_record_key('comment', 'p' || i, u), 'comment', 'p' || i, 'post', 'Club', 'a' || i,
           '{"kind":"community","id":"c","name":"Club"}', '[]', 1, $1::bigint + i, $1::bigint + i, i % 3 = 0, $1::bigint + i, $1::bigint + i,
           $1::bigint + i + 7776000000
         FROM (SELECT i, CASE WHEN i <= 1200 THEN 'u-heavy' ELSE 'u' || (i % 500) END AS u
               FROM generate_series(1, 100000) AS i) AS s`,
        [NOW - 60_000],
      );
      await pool.query(
        `INSERT INTO tray_records (user_id, key, verb, target_id, target_type, target_name, last_action_id,
           feed, actors, actors_count, count_from, last_update, has_read, unread_at, changed_at, expires_at)
         SELECT u, tray_record_key('comment', 'q', u), 'comment', 'q', 'post', 'Club', 'a',
           '{"kind":"community","id":"c","name":"Club"}', '[]', 1, $1::bigint, $1::bigint, false, $1::bigint,
           $1::bigint, $1::bigint + 7776000000
         FROM (SELECT 'light-' || i AS u FROM generate_series(1, 40000) AS i) AS s`,
        [NOW - 60_000],
      );
      await pool.query('ANALYZE tray_records');
      const lines = (result: pg.QueryResult<{ 'QUERY PLAN': string }>) =>
        result.rows.map((row) => row['QUERY PLAN']).join('\n');
      plans = async ({ name, text, values }) => {
        const custom = lines(await pool.query(`EXPLAIN ${text}`, values));
        if (name === undefined) return [custom];
        // After five runs a prepared statement may switch to a plan for any values: read it too.
        const client = await pool.connect();
        try {
          await client.query('SET plan_cache_mode = force_generic_plan');
          await client.query(`PREPARE generic AS ${text}`);
          const args = values.map((value) => (value === null ? 'NULL' : client.escapeLiteral(String(value))));
          const generic = lines(await client.query(`EXPLAIN EXECUTE generic(${args.join(', ')})`));
          return [custom, generic];
        } finally {
          await client.query('DEALLOCATE generic; RESET plan_cache_mode');
          client.release();
        }
      };
      const recording = {
        query: (query: string | { name?: string; text: string; values: unknown[] }, values?: unknown[]) => {
          captured.push(typeof query === 'string' ? { text: query, values: values ?? [] } : query);
          return typeof query === 'string' ? pool.query(query, values) : pool.query(query);
        },
      };
      captured.length = 0;
      const records = createPostgresRecords(recording as unknown as pg.Pool);
      await records.pageAfter('u-heavy', undefined, 10, NOW);
      await records.countUnread('u-heavy', NOW - 30_000, NOW);
      await records.pageNumber('u-heavy', 3, 10, NOW, ['mention']);
      await records.countUnread('u-heavy', 'recorded', NOW);
      await records.pageAfter('u-heavy', NOW - 59_000, 10, NOW);
      await records.changedSince('u-heavy', NOW - 59_000, NOW, { limit: 100 });
      const after = {
        changedAt: NOW - 30_000,
        key: encodeRecordKey({ verb: 'comment', targetId: 'p30000', userId: 'u-heavy' }),
      };
      await records.changedSince('u-heavy', NOW - 59_000, NOW, { limit: 100, after });
    });

    const capturedAt = (index: number) => {
      const query = captured[index];
      if (!query) throw new Error(`no statement ${index} captured`);
      return query;
    };

    it('serves a v2 page from the user’s newest-first index, without sorting their rows', async () => {
      const [plan = ''] = await plans(capturedAt(2));
      expect(plan).to.include('tray_records_inbox_page');
      expect(plan).not.to.match(/Seq Scan|Sort/);
    });

    it('serves a v3 page from the user’s newest-first index, without sorting their rows', async () => {
      for (const query of [capturedAt(0), capturedAt(4)]) {
        // Planned for its values every time: a generic plan, costed for the average (light) user,
        // would sort u-heavy's whole tray for the LIMIT.
        expect(query.name).to.equal(undefined);
        const [plan = ''] = await plans(query);
        expect(plan).to.include('tray_records_inbox_page');
        expect(plan).not.to.match(/Seq Scan|Sort|Bitmap/);
      }
    });

    // A reconnecting stream's catch-up reads its pages by the time of the records' changes: by any
    // other index each page read the user's whole tray and sorted it (a mark-all-read of 50,000
    // records then took 500 such pages).
    it('serves each page of a stream’s catch-up from the changes index, without sorting the user’s rows', async () => {
      for (const query of [capturedAt(5), capturedAt(6)]) {
        const [plan = ''] = await plans(query);
        expect(plan).to.include('tray_records_changes');
        expect(plan).not.to.match(/Seq Scan|Sort|Bitmap/);
      }
    });

    it('serves the unread count from the unread index, the recorded last-read time by its key', async () => {
      for (const query of [capturedAt(1), capturedAt(3)]) {
        const found = await plans(query);
        expect(found).to.have.length(2);
        for (const plan of found) {
          expect(plan).to.include('tray_records_inbox_unread');
          expect(plan).not.to.match(/Seq Scan|Sort/);
        }
      }
      for (const plan of await plans(capturedAt(3))) expect(plan).to.include('tray_last_read_pkey');
    });
  });
});

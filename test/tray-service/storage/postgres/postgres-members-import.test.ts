import { expect } from 'chai';
import { createPostgresMembersImport } from '../../../../tray-service/storage/postgres/postgres-members-import.ts';
import { OPEN_END } from '../../../../tray-service/storage/postgres/postgres-memberships.ts';
import { at, join, leave, post, useTray } from './tray-fixture.ts';

describe('storage/postgres members import (MembersImportPort)', () => {
  const tray = useTray();
  const importBatch = (userIds: string[], asOfMinutes: number, sinceMinutes = 0) =>
    createPostgresMembersImport(tray.pg.pool).importBatch(
      userIds.map((userId) => ({ communityId: 'c-hike', userId, since: at(sinceMinutes) })),
      at(asOfMinutes),
    );
  const reached = async (userId: string) => (await tray.record(userId, 'post', 'c-hike')) !== undefined;

  it('makes listed users members from `since`: posts after it reach them, earlier ones do not', async () => {
    expect(await importBatch(['u-ana', 'u-bob'], 10, 5)).to.deep.equal({
      inserted: 2,
      updated: 0,
      unchanged: 0,
    });
    await tray.writes.fanOutPosts('c-hike', [post('c-hike', 'u-cid', 4)], tray.context());
    expect(await reached('u-ana')).to.equal(false);
    await tray.writes.fanOutPosts('c-hike', [post('c-hike', 'u-cid', 6)], tray.context());
    expect(await reached('u-ana')).to.equal(true);
    expect(await reached('u-bob')).to.equal(true);
  });

  it('changes nothing when the same list is imported again', async () => {
    await importBatch(['u-ana'], 10);
    // Both lines counted: the counts add up to the lines given, as on MongoDB.
    expect(await importBatch(['u-ana', 'u-ana'], 10)).to.deep.equal({
      inserted: 0,
      updated: 0,
      unchanged: 2,
    });
  });

  // A deadlock or serialization failure runs the import's transaction again (withRetry): what the
  // aborted run counted must not be counted twice. The failure is PostgreSQL's own, raised once by
  // a trigger (a sequence is not rolled back with the transaction).
  it('counts each line once when its transaction is run again after a serialization failure', async () => {
    await importBatch(['u-ana'], 10);
    const { pool } = tray.pg;
    await pool.query(`CREATE SEQUENCE import_fail_once;
      CREATE FUNCTION import_fail_once() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF nextval('import_fail_once') = 1 THEN
          RAISE EXCEPTION 'could not serialize access' USING ERRCODE = '40001';
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER import_fail_once AFTER INSERT ON tray_imported_members
        FOR EACH STATEMENT EXECUTE FUNCTION import_fail_once();`);
    try {
      // Ana imported before: the list's time stored for her (updated), once.
      expect(await importBatch(['u-ana', 'u-bob'], 20)).to.deep.equal({
        inserted: 1,
        updated: 1,
        unchanged: 0,
      });
      expect(
        Number((await pool.query<{ n: string }>(`SELECT last_value AS n FROM import_fail_once`)).rows[0]?.n),
      ).to.equal(2);
    } finally {
      await pool.query(`DROP TRIGGER import_fail_once ON tray_imported_members;
        DROP FUNCTION import_fail_once(); DROP SEQUENCE import_fail_once;`);
    }
  });

  it('keeps each list’s time once, and folds them all into the stored memberships', async () => {
    const { pool } = tray.pg;
    await importBatch(['u-ana'], 10);
    await tray.writes.applyMemberships([leave('c-hike', 'u-ana', 20)], tray.context());
    expect(await importBatch(['u-ana'], 40)).to.deep.equal({ inserted: 0, updated: 1, unchanged: 0 });
    await tray.writes.applyMemberships([leave('c-hike', 'u-ana', 50)], tray.context());
    // An older list, imported late, adds its time too; one imported before adds nothing.
    expect(await importBatch(['u-ana'], 30)).to.deep.equal({ inserted: 0, updated: 1, unchanged: 0 });
    expect(await importBatch(['u-ana'], 60)).to.deep.equal({ inserted: 0, updated: 1, unchanged: 0 });
    for (const minutes of [10, 30, 40, 60])
      expect(await importBatch(['u-ana'], minutes)).to.deep.equal({ inserted: 0, updated: 0, unchanged: 1 });
    const stored = await pool.query<{ as_of: string; relisted_at: string[] }>(
      "SELECT as_of, relisted_at FROM tray_imported_members WHERE user_id = 'u-ana'",
    );
    expect(stored.rows.map((row) => [Number(row.as_of), row.relisted_at.map(Number)])).to.deep.equal([
      [at(10), [at(40), at(30), at(60)]],
    ]);
    const spans = await pool.query<{ from_at: string; to_at: string }>(
      "SELECT from_at, to_at FROM tray_memberships WHERE user_id = 'u-ana' ORDER BY from_at",
    );
    expect(spans.rows.map((row) => [Number(row.from_at), row.to_at])).to.deep.equal([
      [at(0), String(at(20))],
      [at(30), String(at(50))],
      [at(60), OPEN_END],
    ]);
  });

  it('lets a leave stored after the list’s time stand, and overrides one stored before it', async () => {
    await tray.writes.applyMemberships(
      [leave('c-hike', 'u-ana', 20), leave('c-hike', 'u-bob', 5)],
      tray.context(),
    );
    await importBatch(['u-ana', 'u-bob'], 10);
    await tray.writes.fanOutPosts('c-hike', [post('c-hike', 'u-cid', 30)], tray.context());
    expect(await reached('u-ana')).to.equal(false);
    expect(await reached('u-bob')).to.equal(true);
  });

  it('updates a member who left since the last import when a later list names them again', async () => {
    await importBatch(['u-ana'], 10);
    await tray.writes.applyMemberships([leave('c-hike', 'u-ana', 20)], tray.context());
    expect(await importBatch(['u-ana'], 30)).to.deep.equal({ inserted: 0, updated: 1, unchanged: 0 });
    await tray.writes.fanOutPosts('c-hike', [post('c-hike', 'u-cid', 31)], tray.context());
    expect(await reached('u-ana')).to.equal(true);
    // A join stored by the worker keeps working beside the import.
    await tray.writes.applyMemberships([join('c-hike', 'u-dee', 0)], tray.context());
    expect(await reached('u-dee')).to.equal(true);
  });
});

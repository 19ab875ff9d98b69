import { expect } from 'chai';
import pgDriver from 'pg';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout } from 'node:timers/promises';
import {
  isRetryableMigrationFailure,
  migrate,
  MIGRATION_LOCK,
  readMigrations,
  type MigrationEvent,
} from '../../../../tray-service/storage/postgres/migrate.ts';
import { isPermanentStorageError } from '../../../../tray-service/storage/permanent-storage-error.ts';
import { SchemaUpgradeError } from '../../../../tray-service/storage/schema-upgrade-error.ts';
import { usePostgres } from '../../../support/use-postgres.ts';
import { waitFor } from '../../../support/wait-for.ts';
import { cleanEnv, repoRoot } from '../../../support/run-script.ts';

function migrationsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'migrations-'));
  for (const [name, sql] of Object.entries(files)) writeFileSync(join(dir, name), sql);
  return dir;
}

describe('storage/postgres migrate', () => {
  const pg = usePostgres();
  beforeEach(async () => {
    await pg.pool.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
  });

  it('applies numbered files in order, once, and records their versions', async () => {
    const dir = migrationsDir({
      '0002_second.sql': 'ALTER TABLE things ADD COLUMN size integer;',
      '0001_first.sql': 'CREATE TABLE things (id integer PRIMARY KEY);',
      'README.md': 'not a migration',
    });
    expect(await migrate(pg.pool, readMigrations(dir))).to.deep.equal([1, 2]);
    expect(await migrate(pg.pool, readMigrations(dir))).to.deep.equal([]);
    const columns = await pg.pool.query(
      "SELECT column_name FROM information_schema.columns WHERE table_name = 'things' ORDER BY 1",
    );
    expect(columns.rows.map((row: { column_name: string }) => row.column_name)).to.deep.equal(['id', 'size']);
  });

  // Two branches each adding a 0025: the second was skipped without a word (its version recorded),
  // and a file misnamed (0026_Add-Index.sql) was never read.
  it('refuses a folder with two migrations of one version, or an SQL file not named as one', () => {
    expect(() =>
      readMigrations(migrationsDir({ '0001_first.sql': 'SELECT 1;', '0001_other.sql': 'SELECT 2;' })),
    ).to.throw('two schema migrations numbered 1: 0001_first.sql and 0001_other.sql');
    expect(() =>
      readMigrations(migrationsDir({ '0001_first.sql': 'SELECT 1;', '0002_Add-Index.sql': 'SELECT 2;' })),
    ).to.throw('0002_Add-Index.sql: expected a schema migration named NNNN_lower_case_words.sql');
    expect(
      readMigrations(migrationsDir({ '0001_first.sql': 'SELECT 1;', 'README.md': '' })),
    ).to.have.lengthOf(1);
  });

  it('keeps the repository’s migrations one per version, each named as one', () => {
    const all = readMigrations();
    expect(new Set(all.map((one) => one.version)).size).to.equal(all.length);
  });

  it('applies each version once when several instances start at the same moment', async () => {
    const dir = migrationsDir({
      '0001_counted.sql':
        'CREATE TABLE runs (n serial PRIMARY KEY, version integer); INSERT INTO runs (version) VALUES (1);',
      '0002_counted.sql': 'INSERT INTO runs (version) VALUES (2);',
    });
    const results = await Promise.all(Array.from({ length: 4 }, () => migrate(pg.pool, readMigrations(dir))));
    // Each version by one of them (not necessarily the same one: each migration is its own
    // transaction under the lock), once, in order.
    expect(results.flat().sort()).to.deep.equal([1, 2]);
    const runs = await pg.pool.query<{ version: number }>('SELECT version FROM runs ORDER BY n');
    expect(runs.rows.map((row) => row.version)).to.deep.equal([1, 2]);
  });

  it("is not cut short by the pool's statement timeout: a migration may rewrite a large table", async () => {
    // The tray's pool cancels any statement after PG_STATEMENT_TIMEOUT_MS (10 s by default); a
    // migration that rewrites tray_records on a large database takes longer, and would then stop
    // every start-up of the upgraded service.
    const impatient = new pgDriver.Pool({ connectionString: pg.url, max: 1, statement_timeout: 50 });
    try {
      const dir = migrationsDir({
        '0001_slow.sql': 'SELECT pg_sleep(0.3); CREATE TABLE slow_done (id integer);',
      });
      expect(await migrate(impatient, readMigrations(dir))).to.deep.equal([1]);
      const after = await impatient.query<{ statement_timeout: string }>('SHOW statement_timeout');
      expect(
        after.rows[0]?.statement_timeout,
        'the timeout of the pool is kept for later statements',
      ).to.equal('50ms');
    } finally {
      await impatient.end();
    }
  });

  // Each migration commits on its own: the ones before a failing one stay applied and recorded,
  // and the next start-up begins at the failing one.
  it('rolls a failing migration back whole and names it, keeping the ones before it', async () => {
    const dir = migrationsDir({
      '0001_ok.sql': 'CREATE TABLE kept (id integer);',
      '0002_broken.sql': 'CREATE TABLE half (id integer); SELECT 1 / 0;',
    });
    const error = await migrate(pg.pool, readMigrations(dir)).then(
      () => undefined,
      (failed: unknown) => failed,
    );
    expect(error).to.be.instanceOf(SchemaUpgradeError);
    expect((error as Error).message).to.match(/^schema migration 2 \(broken\) failed: division by zero/);
    // Every start-up attempt would meet it again: start-up stops at once instead of reading it as
    // a database that does not answer and trying for up to TRAY_STARTUP_WAIT_MS.
    expect(isPermanentStorageError(error)).to.equal(true);
    const tables = await pg.pool.query(
      "SELECT to_regclass('kept')::text AS kept, to_regclass('half')::text AS half",
    );
    expect(tables.rows[0]).to.deep.equal({ kept: 'kept', half: null });
    const versions = await pg.pool.query<{ version: number }>('SELECT version FROM schema_migrations');
    expect(versions.rows.map((row) => row.version)).to.deep.equal([1]);
  });

  // A long migration (a scan of tray_records) must not keep an earlier one's ACCESS EXCLUSIVE
  // locks: a still-running earlier instance's reads and writes of those tables would wait, and
  // fail at their statement timeout, for as long as it runs.
  it('holds no lock of an earlier migration while a later one runs', async function () {
    this.timeout(30_000);
    const dir = migrationsDir({
      '0001_altered.sql': 'ALTER TABLE altered ADD COLUMN size integer;',
      '0002_long.sql': 'SELECT pg_advisory_xact_lock(4242);',
    });
    await pg.pool.query('CREATE TABLE altered (id integer)');
    const holder = await pg.pool.connect();
    try {
      await holder.query('SELECT pg_advisory_lock(4242)');
      const migrating = migrate(pg.pool, readMigrations(dir));
      let waiting: number | undefined;
      await waitFor(
        async () => {
          const { rows } = await pg.pool.query<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity
             WHERE datname = current_database() AND query = 'SELECT pg_advisory_xact_lock(4242);'`,
          );
          waiting = rows[0]?.pid;
          return waiting !== undefined;
        },
        5_000,
        'the second migration to run',
      );
      const { rows } = await pg.pool.query<{ mode: string }>(
        "SELECT mode FROM pg_locks WHERE pid = $1 AND relation = to_regclass('altered')",
        [waiting],
      );
      await holder.query('SELECT pg_advisory_unlock(4242)');
      expect(rows.map((row) => row.mode)).to.deep.equal([]);
      expect(await migrating).to.deep.equal([1, 2]);
    } finally {
      await holder.query('SELECT pg_advisory_unlock_all()');
      holder.release();
    }
  });

  // A waiting ALTER TABLE queues every later statement on its table behind it: behind an open
  // transaction (a pg_dump, an analyst's query) the previous version's reads and writes stalled
  // for as long as that lasted, and failed at their statement timeout.
  it('lets the previous version go on while a migration waits for a lock, and applies it once the lock is free', async function () {
    this.timeout(20_000);
    const dir = migrationsDir({ '0001_altered.sql': 'ALTER TABLE altered ADD COLUMN size integer;' });
    await pg.pool.query('CREATE TABLE altered (id integer)');
    const holder = await pg.pool.connect();
    const writer = await pg.pool.connect();
    const events: MigrationEvent[] = [];
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT * FROM altered');
      const migrating = migrate(pg.pool, readMigrations(dir), {
        lockWaitMs: 100,
        retryPauseMs: 50,
        onEvent: (event) => events.push(event),
      });
      await waitFor(
        async () => {
          const { rows } = await pg.pool.query(
            `SELECT 1 FROM pg_stat_activity
             WHERE datname = current_database() AND query = 'ALTER TABLE altered ADD COLUMN size integer;'`,
          );
          return rows.length > 0;
        },
        5_000,
        'the migration to wait for its lock',
      );
      await setTimeout(300);
      // The previous version's write: it waits at most one lock wait of the migration, not until
      // the open transaction ends.
      await writer.query("SET lock_timeout = '1s'");
      await writer.query('INSERT INTO altered (id) VALUES (1)');
      await writer.query('RESET lock_timeout');
      await holder.query('COMMIT');
      expect(await migrating).to.deep.equal([1]);
      const { rows } = await pg.pool.query('SELECT id, size FROM altered');
      expect(rows).to.deep.equal([{ id: 1, size: null }]);
      const waits = events.filter((event) => event.kind === 'lock-wait');
      expect(waits.length, 'its lock waits are told').to.be.above(0);
      expect(waits[0]).to.deep.include({ version: 1, name: 'altered', attempt: 1, retryInMs: 50 });
      expect(events[0]).to.deep.equal({ kind: 'applying', version: 1, name: 'altered' });
      expect(events.at(-1)).to.deep.include({ kind: 'applied', version: 1, name: 'altered' });
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      holder.release();
      writer.release();
    }
  });

  // A data migration's rows meet the previous version's writes (a rolling upgrade): when the
  // server picks the migration as a deadlock's victim, the whole scan was rolled back and start-up
  // failed, to meet the same writes again on the next start.
  it('runs a migration a deadlock rolled back again, and applies it once', async function () {
    this.timeout(20_000);
    const dir = migrationsDir({
      '0001_scan.sql': 'UPDATE first_rows SET n = n + 1; UPDATE second_rows SET n = n + 1;',
    });
    await pg.pool.query('CREATE TABLE first_rows (n integer); INSERT INTO first_rows VALUES (0)');
    await pg.pool.query('CREATE TABLE second_rows (n integer); INSERT INTO second_rows VALUES (0)');
    const writer = await pg.pool.connect();
    const events: MigrationEvent[] = [];
    try {
      // The previous version's transaction: the second table's row first, then the first's.
      await writer.query('BEGIN');
      await writer.query('UPDATE second_rows SET n = n + 10');
      const migrating = migrate(pg.pool, readMigrations(dir), {
        lockWaitMs: 10_000,
        retryPauseMs: 50,
        onEvent: (event) => events.push(event),
      });
      await waitFor(
        async () => {
          const { rows } = await pg.pool.query(
            `SELECT 1 FROM pg_stat_activity WHERE datname = current_database()
               AND wait_event_type = 'Lock' AND query LIKE 'UPDATE first_rows%'`,
          );
          return rows.length > 0;
        },
        5_000,
        'the migration to wait for the second table’s row',
      );
      // Waiting after the migration, the writer's own deadlock check comes later: the migration's
      // finds the cycle and is the victim.
      await writer.query('UPDATE first_rows SET n = n + 10');
      await writer.query('COMMIT');
      expect(await migrating).to.deep.equal([1]);
      const { rows } = await pg.pool.query(
        'SELECT (SELECT n FROM first_rows) AS first, (SELECT n FROM second_rows) AS second',
      );
      expect(rows).to.deep.equal([{ first: 11, second: 11 }]);
      expect(events.map((event) => event.kind)).to.deep.equal(['applying', 'retry', 'applied']);
    } finally {
      await writer.query('ROLLBACK').catch(() => undefined);
      writer.release();
    }
  });

  // The connection may end mid-migration: the server restarts, an administrator ends it, or the
  // pool's keepalive finds the server gone. Start-up must see a failed attempt (and try again),
  // not an uncaught 'error' event ending the process.
  // A socket's own code is no SQLSTATE, whatever it looks like: EPIPE, a server restarting during a
  // migration, read as the class "EP", stopped start-up for good.
  it('tries again after a cut connection, whatever its code looks like, and not after what the server refuses', () => {
    for (const code of ['EPIPE', 'ECONNRESET'])
      expect(isRetryableMigrationFailure(Object.assign(new Error(`write ${code}`), { code })), code).to.equal(
        true,
      );
    expect(isRetryableMigrationFailure(new Error('Connection terminated unexpectedly'))).to.equal(true);
    const reported = (code: string) =>
      Object.assign(new Error('from the server'), { code, severity: 'ERROR' });
    expect(isRetryableMigrationFailure(reported('57P01')), 'admin shutdown').to.equal(true);
    expect(isRetryableMigrationFailure(reported('53300')), 'too many connections').to.equal(true);
    expect(isRetryableMigrationFailure(reported('42501')), 'insufficient privilege').to.equal(false);
    expect(isRetryableMigrationFailure(reported('23502')), 'not null violation').to.equal(false);
  });

  it('stops start-up at once when the role may not do what a migration does', async () => {
    const role = `migrator_${Date.now()}`;
    await pg.pool.query('CREATE TABLE owned (id integer); INSERT INTO owned VALUES (1)');
    await pg.pool.query(`CREATE ROLE ${role} LOGIN PASSWORD 'x'; GRANT ALL ON SCHEMA public TO ${role}`);
    const url = new URL(pg.url);
    url.username = role;
    url.password = 'x';
    const own = new pgDriver.Pool({ connectionString: url.toString(), max: 1 });
    try {
      const dir = migrationsDir({ '0001_alter.sql': 'ALTER TABLE owned ADD COLUMN more integer;' });
      const error = await migrate(own, readMigrations(dir)).then(
        () => undefined,
        (failed: unknown) => failed,
      );
      expect((error as Error).message).to.match(
        /^schema migration 1 \(alter\) failed: must be owner of table owned/,
      );
      expect(isPermanentStorageError(error)).to.equal(true);
    } finally {
      await own.end();
      await pg.pool.query(`DROP OWNED BY ${role}; DROP ROLE ${role}`);
    }
  });

  // `ALTER ROLE tray SET lock_timeout = '5s'` is a common safeguard: it bounded the wait for
  // another instance's migration too, and instances starting during a long one stopped.
  it('waits for another instance’s migration however short a lock_timeout the role sets', async () => {
    const own = new pgDriver.Pool({
      connectionString: `${pg.url}${pg.url.includes('?') ? '&' : '?'}options=-c%20lock_timeout%3D100`,
      max: 1,
    });
    const holder = await pg.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      const dir = migrationsDir({ '0001_first.sql': 'CREATE TABLE things (id integer PRIMARY KEY);' });
      const migrating = migrate(own, readMigrations(dir)).then(
        (applied) => applied,
        (failed: unknown) => failed,
      );
      await setTimeout(600);
      await holder.query('COMMIT');
      expect(await migrating).to.deep.equal([1]);
    } finally {
      holder.release();
      await own.end();
    }
  });

  // A process killed mid-migration (a rollout undone, a start-up probe too short): PostgreSQL
  // learns its client is gone only when it answers, so the migration ran on to its end holding its
  // locks, and every next instance waited behind it.
  it('stops a migration on the server once the process that ran it is gone', async function () {
    this.timeout(30_000);
    const dir = migrationsDir({ '0001_long.sql': 'SELECT pg_sleep(20);' });
    const module = pathToFileURL(join(repoRoot, 'tray-service/storage/postgres/migrate.ts')).href;
    const code = [
      "const { default: pg } = await import('pg');",
      `const { migrate, readMigrations } = await import(${JSON.stringify(module)});`,
      'await migrate(new pg.Pool({ connectionString: process.env.URL }), readMigrations(process.env.DIR));',
    ].join('\n');
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      env: cleanEnv({ URL: pg.url, DIR: dir }),
      stdio: 'ignore',
    });
    const running = async () =>
      (
        await pg.pool.query(
          `SELECT 1 FROM pg_stat_activity
           WHERE datname = current_database() AND query = 'SELECT pg_sleep(20);'`,
        )
      ).rows.length > 0;
    try {
      await waitFor(running, 10_000, 'the migration to run');
      child.kill('SIGKILL');
      await waitFor(async () => !(await running()), 5_000, 'the server to stop the migration');
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('fails, naming the migration, when the server ends its connection mid-migration, and leaves the pool usable', async () => {
    const own = new pgDriver.Pool({ connectionString: pg.url, max: 1 });
    own.on('error', () => undefined);
    try {
      const dir = migrationsDir({ '0001_long.sql': 'SELECT pg_sleep(30);' });
      const migrating = migrate(own, readMigrations(dir)).then(
        () => undefined,
        (failed: unknown) => failed,
      );
      await waitFor(
        async () => {
          const { rows } = await pg.pool.query(
            `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
             WHERE datname = current_database() AND query = 'SELECT pg_sleep(30);'`,
          );
          return rows.length > 0;
        },
        5_000,
        'the migration to run',
      );
      const error = await migrating;
      expect(error).to.be.instanceOf(Error);
      expect((error as Error).message).to.match(
        /^schema migration 1 \(long\) failed: terminating connection/,
      );
      // The connection's loss, not the statement's: the next attempt may pass.
      expect(isPermanentStorageError(error)).to.equal(false);
      expect((await own.query('SELECT 1 AS one')).rows).to.deep.equal([{ one: 1 }]);
    } finally {
      await own.end();
    }
  });

  it('starts the records that exist before the inbox seen as they are read, all in the inbox', async () => {
    const migrations = readMigrations();
    await migrate(
      pg.pool,
      migrations.filter((migration) => migration.version < 5),
    );
    await pg.pool.query(
      `INSERT INTO tray_records (user_id, key, verb, target_id, target_type, target_name, last_action_id,
         feed, actors, actors_count, count_from, last_update, has_read, unread_at, changed_at, expires_at)
       SELECT 'u-ana', 'k' || i, 'comment', 'p' || i, 'post', 'Club', 'a', '{}', '[]', 1, 1, 1, i = 1, 1, 1, 2
       FROM generate_series(1, 2) AS i`,
    );
    expect(await migrate(pg.pool, migrations)).to.include(5);
    const { rows } = await pg.pool.query(
      'SELECT key, has_read, is_seen, in_inbox FROM tray_records ORDER BY key',
    );
    expect(rows).to.deep.equal([
      { key: 'k1', has_read: true, is_seen: true, in_inbox: true },
      { key: 'k2', has_read: false, is_seen: false, in_inbox: true },
    ]);
  });

  it('keeps what was kept of each group before removals as group actions: actors by target, personal actions by recipient', async () => {
    const migrations = readMigrations();
    await migrate(
      pg.pool,
      migrations.filter((migration) => migration.version < 6),
    );
    await pg.pool.query(
      `INSERT INTO tray_target_actors (verb, target_id, actor_id, name, at, action_id, expires_at) VALUES
         ('post', 'c-1', 'u-ben', 'Ben', 10, 'p-1', 99), ('comment', 'p-2', 'u-cy', 'Cy', 20, 'cm-1', 99);
       INSERT INTO tray_personal_actions (user_id, verb, target_id, actor_id, action_id, community_id, at, activity, expires_at)
       VALUES ('u-ana', 'mentreply', 'cm-1', 'u-cy', 'cm-2', 'c-1', 30,
         '{"actor": {"userId": "u-cy", "name": "Cy"}, "parentTargetId": "p-2", "lastActionSegmentNo": 4}', 99)`,
    );
    expect(await migrate(pg.pool, migrations)).to.include(6);
    const { rows } = await pg.pool.query(
      `SELECT verb, target_id, action_id, recipient, name, seg, post_id, community_id
       FROM tray_group_actions ORDER BY at`,
    );
    expect(rows).to.deep.equal([
      {
        verb: 'post',
        target_id: 'c-1',
        action_id: 'p-1',
        recipient: '',
        name: 'Ben',
        seg: null,
        post_id: 'p-1',
        community_id: 'c-1',
      },
      {
        verb: 'comment',
        target_id: 'p-2',
        action_id: 'cm-1',
        recipient: '',
        name: 'Cy',
        seg: null,
        post_id: 'p-2',
        community_id: null,
      },
      {
        verb: 'mentreply',
        target_id: 'cm-1',
        action_id: 'cm-2',
        recipient: 'u-ana',
        name: 'Cy',
        seg: '4',
        post_id: 'p-2',
        community_id: 'c-1',
      },
    ]);
  });
});

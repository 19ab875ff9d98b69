import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostgres, type PostgresServer } from '../../../../scripts/lib/local-servers.ts';
import type { TrayStorage } from '../../../../tray-service/storage/port.ts';
import { openPostgresStorage } from '../../../../tray-service/storage/postgres/open-postgres-storage.ts';
import { readMigrations } from '../../../../tray-service/storage/postgres/migrate.ts';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { usePostgres } from '../../../support/use-postgres.ts';
import { waitFor } from '../../../support/wait-for.ts';
import { comment, NOW, RETENTION_DAYS, RETENTION_MS } from './tray-fixture.ts';

const options = { poolSize: 3, statementTimeoutMs: 5_000, applicationName: 'tray-open-test' };

describe('storage/postgres openPostgresStorage', () => {
  const pg = usePostgres();
  const opened: TrayStorage[] = [];
  const open = async () => {
    const storage = await openPostgresStorage(pg.url, options);
    opened.push(storage);
    return storage;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((storage) => storage.close()));
    // Each test starts from an empty tray on the migrated schema.
    const { rows } = await pg.pool.query<{ names: string | null }>(
      `SELECT string_agg(quote_ident(tablename), ', ') AS names FROM pg_tables
       WHERE schemaname = 'public' AND tablename <> 'schema_migrations'`,
    );
    if (rows[0]?.names) await pg.pool.query(`TRUNCATE ${rows[0].names}`);
  });

  it('brings the schema up to date at start, once however many instances start together', async () => {
    const [storage] = await Promise.all([open(), open(), open()]);
    const { rows } = await pg.pool.query<{ version: number }>(
      'SELECT version FROM schema_migrations ORDER BY 1',
    );
    expect(rows.map((row) => row.version)).to.deep.equal(
      readMigrations().map((migration) => migration.version),
    );
    expect(storage?.engine).to.equal('postgres');
  });

  it('answers ping, names its connections, and refuses to ping once closed (closing twice is harmless)', async () => {
    const storage = await open();
    await storage.ping();
    const { rows } = await pg.pool.query(
      "SELECT 1 FROM pg_stat_activity WHERE application_name = 'tray-open-test' AND datname = current_database()",
    );
    expect(rows.length).to.be.greaterThan(0);
    await storage.close();
    await storage.close();
    await expect(storage.ping()).to.be.rejected;
  });

  // The worker's gate tells an outage from a job's own failure by the ping, and /readyz asks it:
  // a pool whose every connection waits on a lock (busy jobs) is no outage, and must not read as one.
  it('answers ping while every connection of its pool waits on a lock', async () => {
    const storage = await open();
    const holder = await pg.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE tray_last_read IN ACCESS EXCLUSIVE MODE');
      const waiting = Array.from({ length: options.poolSize }, (_, n) =>
        storage.lastRead.record(`u-busy-${n}`, NOW),
      );
      await waitFor(
        async () =>
          (
            await pg.pool.query(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'tray-open-test'
                 AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO tray_last_read%'`,
            )
          ).rows[0]?.n === options.poolSize,
        5_000,
        'every pooled connection to wait on the lock',
      );
      const answered = await Promise.race([
        storage.ping().then(() => 'answered'),
        new Promise((resolve) => setTimeout(resolve, 5_000, 'still waiting')),
      ]);
      expect(answered).to.equal('answered');
      await holder.query('ROLLBACK');
      await Promise.all(waiting);
    } finally {
      holder.release();
    }
  });

  it('assembles every part on one database: what one part writes, the others of the same storage see', async () => {
    const storage = await open();
    const context = { now: NOW, retentionDays: RETENTION_DAYS };
    await storage.writes.applyPersonal([comment('p-1', 'u-cid', 1)], context);
    expect(await storage.records.count('u-ana', NOW)).to.equal(1);
    await storage.lastRead.record('u-ana', NOW);
    expect(await storage.lastRead.latest('u-ana')).to.equal(NOW);
    expect(await storage.clears.latest('u-ana')).to.equal(0);
    await storage.blockList.block('n_u-ana', 'u-cid');
    expect(await storage.blockList.blockedAmong('n_u-ana', ['u-cid'])).to.deep.equal(new Set(['u-cid']));
    await storage.bans.apply([{ userId: 'u-cid', banned: true, at: NOW }]);
    expect(await storage.bans.all()).to.deep.equal([{ userId: 'u-cid', banned: true, at: NOW }]);
    expect(await storage.decisions.pendingAmong(['none'])).to.deep.equal([]);
    expect(
      await storage.members.importBatch([{ communityId: 'c-1', userId: 'u-ana', since: NOW }], NOW),
    ).to.include({ inserted: 1 });
  });

  it('purges expired records and expired events, and counts each', async () => {
    const storage = await open();
    const context = { now: NOW, retentionDays: RETENTION_DAYS };
    await storage.writes.applyPersonal([comment('p-9', 'u-cid', 0)], context);
    const receivedAt = new Date(NOW);
    for (const key of ['e1', 'e2']) {
      await storage.events.store(
        { key, event: 'comment.created', webhook: 'w', data: {}, receivedAt },
        { status: 'applied' },
        { retentionDays: 1, now: receivedAt },
      );
    }
    expect(await storage.purgeExpired(new Date(NOW + DAY_MS))).to.deep.equal({ records: 0, events: 2 });
    expect(await storage.purgeExpired(new Date(NOW + RETENTION_MS + DAY_MS))).to.deep.equal({
      records: 1,
      events: 0,
    });
  });

  it('purges every other table when one fails, and names the one that failed', async () => {
    // A statement timeout as the pool's PG_STATEMENT_TIMEOUT_MS, short: the batch on a table
    // held by another transaction is cancelled, as one scanning a huge table was.
    const storage = await openPostgresStorage(pg.url, { ...options, statementTimeoutMs: 300 });
    opened.push(storage);
    const expired = NOW - DAY_MS;
    const rows = [
      `tray_records (user_id, key, verb, target_id, target_type, target_name, last_action_id, feed, actors,
         actors_count, count_from, last_update, unread_at, changed_at, expires_at)
       VALUES ('u-ana', 'k', 'comment', 'p-1', 'post', 'Club', 'a', '{}', '[]', 1, 1, 1, 1, 1, ${expired})`,
      `tray_target_actors (verb, target_id, actor_id, name, at, action_id, expires_at)
       VALUES ('comment', 'p-1', 'u-cid', 'Cid', 1, 'a', ${expired})`,
      `tray_community_posts (community_id, action_id, at, activity, expires_at)
       VALUES ('c-1', 'p-1', 1, '{}', ${expired})`,
      `tray_personal_actions (user_id, verb, target_id, actor_id, action_id, community_id, at, activity, expires_at)
       VALUES ('u-ana', 'comment', 'p-1', 'u-cid', 'a', 'c-1', 1, '{}', ${expired})`,
      `tray_group_actions (target_id, verb, action_id, recipient, actor_id, name, at, expires_at)
       VALUES ('p-1', 'comment', 'a', '', 'u-cid', 'Cid', 1, ${expired})`,
      `tray_removals (post_id, kind, id, at, expires_at) VALUES ('p-1', 'post', 'p-1', 1, ${expired})`,
      `tray_removal_outcomes (event_key, voided, shrunk, replaced, removed, listed, expires_at)
       VALUES ('e-1', 0, 0, 0, 0, 0, ${expired})`,
      `tray_removal_changes (event_key, user_id, key, change, before, expires_at)
       VALUES ('e-1', 'u-ana', 'k', 'removed', '{}', ${expired})`,
      `tray_mutes (user_id, target_type, target_id, created_at, expires_at)
       VALUES ('u-ana', 'post', 'p-1', 1, ${expired})`,
      `stored_event_lag_minutes (minute, count, buckets, max_ms, expires_at)
       VALUES (to_timestamp(0), 1, '{}', 1, to_timestamp(${expired} / 1000.0))`,
    ];
    for (const row of rows) await pg.pool.query(`INSERT INTO ${row}`);
    // An event and its minute (stored_events, stored_event_minutes), expired too.
    const receivedAt = new Date(expired - DAY_MS);
    await storage.events.store(
      { key: 'e1', event: 'comment.created', webhook: 'w', data: {}, receivedAt },
      { status: 'applied' },
      { retentionDays: 1, now: receivedAt },
    );
    const tables = rows.map((row) => row.split(' ')[0] ?? '').concat('stored_events', 'stored_event_minutes');
    const left = async () => {
      const counts: Record<string, number> = {};
      for (const table of tables)
        counts[table] = Number((await pg.pool.query(`SELECT count(*) AS n FROM ${table}`)).rows[0]?.n);
      return counts;
    };
    const nothingLeft = Object.fromEntries(tables.map((table) => [table, 0]));

    const holder = await pg.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE tray_records IN ACCESS EXCLUSIVE MODE');
      // The mute spans' purge reads their owners' records (kept while a record they judge lives),
      // so it waits for the lock too and fails with it.
      const timeout = 'canceling statement due to statement timeout';
      await expect(storage.purgeExpired(new Date(NOW))).to.be.rejectedWith(
        `purge failed on tray_records: ${timeout}, tray_mutes: ${timeout}; every other table was purged`,
      );
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    expect(await left()).to.deep.equal({ ...nothingLeft, tray_records: 1, tray_mutes: 1 });
    expect(await storage.purgeExpired(new Date(NOW))).to.deep.equal({ records: 1, events: 0 });
    expect(await left()).to.deep.equal(nothingLeft);
  });

  it('fails to open on a database that does not exist, leaving nothing connected', async () => {
    const url = new URL(pg.url);
    url.pathname = '/no_such_database';
    await expect(openPostgresStorage(url.toString(), options)).to.be.rejectedWith(/no_such_database/);
  });
});

/** PostgreSQL's ReadyForQuery message as a server sends it when a session's start-up is done. */
const READY_FOR_QUERY = Buffer.from([0x5a, 0, 0, 0, 5]);

/**
 * A TCP relay to `target` that passes each session's start-up both ways and then holds whatever
 * the client sends: the session opens, its first statement never reaches the server (as behind a
 * pooler whose server connection hangs).
 */
async function holdAfterStartUp(target: URL): Promise<{ url: string; server: Server; open: () => number }> {
  const sockets: Socket[] = [];
  let open = 0;
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    sockets.push(client, upstream);
    open += 1;
    client.on('close', () => (open -= 1));
    let started = false;
    client.on('data', (chunk) => {
      if (!started) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (chunk.includes(READY_FOR_QUERY)) started = true;
      client.write(chunk);
    });
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const url = new URL(target);
  url.port = String(port);
  server.on('close', () => sockets.forEach((socket) => socket.destroy()));
  return { url: url.toString(), server, open: () => open };
}

// Start-up retries a storage that fails to open (docs/operations.md#before-exposing-a-port), but
// an open that never settles would hold start-up for ever, without a line in the log.
describe('storage/postgres openPostgresStorage on a server that does not answer', function () {
  this.timeout(30_000);
  const pg = usePostgres();
  let dir = '';
  let stopped: PostgresServer | undefined;
  let relay: Server | undefined;
  afterEach(async () => {
    relay?.close();
    relay = undefined;
    if (stopped) {
      stopped.process.kill('SIGCONT');
      await stopped.stop('SIGKILL');
      stopped = undefined;
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const openFails = async (url: string) => {
    const started = performance.now();
    const error = await openPostgresStorage(url, options).then(
      (storage) => {
        opened(storage);
        return undefined;
      },
      (failed: unknown) => failed,
    );
    return { error, ms: performance.now() - started };
  };
  const leftOpen: TrayStorage[] = [];
  const opened = (storage: TrayStorage) => leftOpen.push(storage);
  after(() => Promise.all(leftOpen.map((storage) => storage.close())));

  it('gives up within 5 s on a server that accepts connections but never answers (a stopped postmaster)', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tray-pg-stopped-'));
    stopped = await startPostgres({ dir });
    stopped.process.kill('SIGSTOP');
    const { error, ms } = await openFails(stopped.url);
    expect(error).to.be.instanceOf(Error);
    expect((error as Error).message).to.equal('no answer within 5 s while connecting');
    expect(ms).to.be.within(4_500, 7_000);
  });

  it('gives up within 5 s on a session whose first statement is never answered', async () => {
    const held = await holdAfterStartUp(new URL(pg.url));
    relay = held.server;
    const { error, ms } = await openFails(held.url);
    expect(error).to.be.instanceOf(Error);
    expect((error as Error).message).to.equal('no answer within 5 s to SELECT 1');
    expect(ms).to.be.within(4_500, 7_000);
    await waitFor(() => held.open() === 0, 2_000, 'the unanswered session to be closed');
  });
});

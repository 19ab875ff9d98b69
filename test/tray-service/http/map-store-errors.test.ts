import { expect } from 'chai';
import express, { type Express } from 'express';
import { MongoClient } from 'mongodb';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import request from 'supertest';
import { errorMiddleware } from '../../../shared/http/error-middleware.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { mapStoreErrors } from '../../../tray-service/http/map-store-errors.ts';
import { StorageBusyError } from '../../../tray-service/storage/storage-busy-error.ts';
import {
  isStorageConnectionLost,
  isStorageUnavailable,
} from '../../../tray-service/storage/storage-unavailable.ts';
import { startFerretOnPostgres, type FerretOnPostgres } from '../../../scripts/lib/local-servers.ts';
import { uniqueName } from '../../support/suite-resources.ts';
import { usePostgres } from '../../support/use-postgres.ts';
import { useStoppablePostgres } from '../../support/use-stoppable-postgres.ts';

const silent = createLogger({ name: 'test', level: 'silent' });

/** An app whose one route runs `query` and hands its failure on, as the tray's routers do. */
function appRunning(query: () => Promise<unknown>): Express {
  const app = express();
  app.get('/query', (_req, res, next) => {
    query().then(() => res.json({ ok: true }), next);
  });
  app.use(mapStoreErrors);
  app.use(errorMiddleware(silent));
  return app;
}

/** The error `query` fails with (the test fails if it succeeds). */
async function failureOf(query: () => Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await query();
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected the query to fail');
}

const unavailable = {
  status: 'error',
  code: 503000,
  message: 'the database is unavailable, try again later',
};

async function expect503(error: Error): Promise<void> {
  const res = await request(appRunning(() => Promise.reject(error))).get('/query');
  expect(res.status, `${(error as { code?: string }).code}: ${error.message}`).to.equal(503);
  expect(res.headers['retry-after']).to.equal('5');
  expect(res.body).to.deep.equal(unavailable);
}

describe('mapStoreErrors: PostgreSQL that cannot serve answers 503 in the JSON error shape', function () {
  this.timeout(60_000);
  const server = useStoppablePostgres();
  const shared = usePostgres();

  it('when the connection ends because the server shuts down (57P01), then when it refuses connections (ECONNREFUSED)', async () => {
    const pool = new pg.Pool({ connectionString: server.url, max: 2 });
    pool.on('error', () => undefined);
    try {
      const running = failureOf(() => pool.query('SELECT pg_sleep(30)'));
      // The query is running before the fast shutdown ends it.
      await new Promise((resolve) => setTimeout(resolve, 300));
      await server.stop();
      const terminated = await running;
      expect(terminated.code).to.equal('57P01');
      await expect503(terminated);

      const refused = await failureOf(() => pool.query('SELECT 1'));
      expect(refused.code).to.equal('ECONNREFUSED');
      await expect503(refused);
    } finally {
      await pool.end();
    }
  });

  it('when a statement outlives the statement timeout (57014)', async () => {
    const pool = new pg.Pool({ connectionString: shared.url, max: 1, statement_timeout: 50 });
    try {
      const timedOut = await failureOf(() => pool.query('SELECT pg_sleep(2)'));
      expect(timedOut.code).to.equal('57014');
      await expect503(timedOut);
    } finally {
      await pool.end();
    }
  });

  it('when no connection slot is left (53300)', async () => {
    // A role allowed no connection meets the same refusal as a full server.
    const role = uniqueName('full')
      .toLowerCase()
      .replace(/[^a-z0-9_]/g, '_');
    await shared.pool.query(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT 0`);
    try {
      const url = new URL(shared.url);
      url.username = role;
      const client = new pg.Client({ connectionString: url.toString() });
      const full = await failureOf(() => client.connect());
      expect(full.code).to.equal('53300');
      await expect503(full);
    } finally {
      await shared.pool.query(`DROP ROLE ${role}`);
    }
  });

  // The adapter runs a transaction aborted so again itself (with-retry.ts); one that still meets
  // it after its tries is contention, which passes: 503, and the worker waits rather than spending
  // an attempt.
  it('when a deadlock outlasts the adapter’s own tries (40P01)', async () => {
    const [a, b] = [
      new pg.Client({ connectionString: shared.url }),
      new pg.Client({ connectionString: shared.url }),
    ];
    await Promise.all([a.connect(), b.connect()]);
    try {
      await a.query('BEGIN; SELECT pg_advisory_xact_lock(4242001)');
      await b.query('BEGIN; SELECT pg_advisory_xact_lock(4242002)');
      const crossed = [
        a.query('SELECT pg_advisory_xact_lock(4242002)'),
        b.query('SELECT pg_advisory_xact_lock(4242001)'),
      ];
      const outcomes = await Promise.allSettled(crossed);
      const deadlock = outcomes.find((outcome) => outcome.status === 'rejected')?.reason as Error & {
        code?: string;
      };
      expect(deadlock.code).to.equal('40P01');
      await expect503(deadlock);
    } finally {
      await Promise.all([a.end(), b.end()]);
    }
  });

  it('when the server is starting up or recovering (57P03)', async () => {
    // Hard to catch live: node-postgres's own error class with the code the server sends then.
    const starting = Object.assign(new pg.DatabaseError('the database system is starting up', 0, 'error'), {
      code: '57P03',
    });
    await expect503(starting);
  });

  it('when a write reaches a server that takes no writes (25006, a former primary): that connection alone failed', async () => {
    const client = new pg.Client({ connectionString: shared.url });
    await client.connect();
    try {
      await client.query('SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY');
      const refused = await failureOf(() => client.query('CREATE TABLE never_made (id int)'));
      expect(refused.code).to.equal('25006');
      await expect503(refused);
      expect(isStorageConnectionLost(refused)).to.equal(true);
    } finally {
      await client.end();
    }
  });

  it('says apart a lost connection from a server that cannot serve any', async () => {
    const timedOut = Object.assign(
      new pg.DatabaseError('canceling statement due to statement timeout', 0, 'error'),
      {
        code: '57014',
      },
    );
    const full = Object.assign(new pg.DatabaseError('too many connections', 0, 'error'), { code: '53300' });
    const ended = Object.assign(
      new pg.DatabaseError('terminating connection due to administrator command', 0, 'error'),
      {
        code: '57P01',
      },
    );
    expect([timedOut, full, ended].map(isStorageUnavailable)).to.deep.equal([true, true, true]);
    expect([timedOut, full, ended].map(isStorageConnectionLost)).to.deep.equal([false, false, true]);
    expect(isStorageConnectionLost(new Error('Connection terminated unexpectedly'))).to.equal(true);
    expect(isStorageConnectionLost(new Error('timeout exceeded when trying to connect'))).to.equal(false);
  });

  it('but hands a wrong query on unchanged (500, never 503)', async () => {
    const wrong = await failureOf(() => shared.pool.query('SELEKT 1'));
    expect(wrong.code).to.equal('42601');
    const res = await request(appRunning(() => Promise.reject(wrong))).get('/query');
    expect(res.status).to.equal(500);
    expect(res.body).to.deep.equal({ status: 'error', code: 500000, message: 'internal error' });
  });
});

describe('mapStoreErrors: MongoDB (FerretDB) that cannot serve answers 503 in the JSON error shape', function () {
  this.timeout(120_000);
  let dir = '';
  let servers: FerretOnPostgres | undefined;
  let client: MongoClient | undefined;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tray-ferret-outage-'));
    servers = await startFerretOnPostgres({ dir });
    client = await MongoClient.connect(servers.ferret.url, { serverSelectionTimeoutMS: 1_000 });
    await client.db('outage').collection('probe').insertOne({ n: 1 });
  });
  after(async () => {
    await client?.close().catch(() => undefined);
    await servers?.ferret.stop().catch(() => undefined);
    await servers?.postgres.stop().catch(() => undefined);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const probe = () => (client as MongoClient).db('outage').collection('probe');

  it('but hands a wrong query on unchanged (500, never 503)', async () => {
    const wrong = await failureOf(() => probe().findOne({ $frobnicate: 1 }));
    const res = await request(appRunning(() => Promise.reject(wrong))).get('/query');
    expect(res.status, wrong.message).to.equal(500);
  });

  // It was a 500: FerretDB answers InternalError (code 1) naming its backend's failure, which the
  // driver does not know for "not now", so a client's retry of 503s never came.
  it('when FerretDB’s own PostgreSQL is stopped: reads and writes alike', async () => {
    await servers?.postgres.stop();
    const read = await failureOf(() => probe().findOne({ n: 1 }));
    const write = await failureOf(() => probe().insertOne({ n: 2 }));
    for (const error of [read, write]) {
      expect((error as { code?: unknown }).code, error.message).to.equal(1);
      await expect503(error);
    }
  });

  it('when FerretDB itself is stopped (no server to select)', async () => {
    await servers?.ferret.stop();
    const unreachable = await failureOf(() => probe().findOne({ n: 1 }));
    await expect503(unreachable);
  });
});

describe('mapStoreErrors: a write kept waiting by others (StorageBusyError)', () => {
  it('answers 503 with Retry-After, as PostgreSQL’s statement timeout does in the same place', async () => {
    await expect503(new StorageBusyError('mute lock of u-1: still held after 30000 ms'));
  });
});

import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { startFerret, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import { connectMongo, type MongoConnection } from '../../../shared/mongo/connect-mongo.ts';
import { bearer, useTrayApi } from './support/api-harness.ts';
import { testPostgres } from '../../support/test-stack.ts';
import { aTrayRecord, insertRecords } from '../../support/tray-record-builder.ts';

describe('tray API (operations)', () => {
  const api = useTrayApi();

  it('GET /healthz answers 200 { status: "ok" }', async () => {
    const res = await request(api.app()).get('/healthz').expect(200);
    expect(res.body).to.deep.equal({ status: 'ok' });
  });

  it('GET /readyz reports MongoDB and Redis reachable', async () => {
    const res = await request(api.app()).get('/readyz').expect(200);
    expect(res.body.checks).to.deep.equal({ mongodb: { ok: true }, redis: { ok: true } });
  });

  it('GET /metrics counts requests and latency by route, unknown paths folded into "unmatched"', async () => {
    const app = api.app();
    await request(app)
      .get('/notifications/v3')
      .set('Authorization', await bearer('metrics-user'))
      .expect(200);
    await request(app).get('/no/such/path/123').expect(404);
    const res = await request(app).get('/metrics').expect(200);
    expect(res.text).to.match(
      /tray_api_requests_total\{method="GET",route="\/notifications\/v3",status="200"[^}]*\} 1/,
    );
    expect(res.text).to.match(
      /tray_api_requests_total\{method="GET",route="unmatched",status="404"[^}]*\} 1/,
    );
    expect(res.text).to.include('tray_api_request_duration_seconds_bucket');
    expect(res.text).not.to.include('/no/such/path');
  });

  it('answers an unknown path with 404 and the JSON error shape', async () => {
    const res = await request(api.app()).get('/notifications/v9').expect(404);
    expect(res.body).to.deep.equal({
      status: 'error',
      code: 404000,
      message: 'no route for GET /notifications/v9',
    });
  });

  describe('when MongoDB is down', function () {
    this.timeout(60_000);
    let dir: string;
    let ferret: LocalServer;
    let connection: MongoConnection;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'tray-api-down-'));
      ferret = await startFerret({ dir, postgresUrl: (await testPostgres()).ferretUrl });
      connection = await connectMongo(ferret.url, 'down', {
        appName: 'tests',
        serverSelectionTimeoutMS: 500,
      });
      // The user has records: the page's bucket counts still come from PostgreSQL, the records
      // themselves must come through the stopped server.
      await insertRecords(connection.db, [aTrayRecord({ userId: 'u' })]);
      await ferret.stop();
    });
    after(async () => {
      await connection.client.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('answers tray calls with 503 and the JSON error shape, no details', async () => {
      const app = api.app({ db: connection.db });
      const res = await request(app)
        .get('/notifications/v3/history')
        .set('Authorization', await bearer('u'))
        .expect(503);
      expect(res.body).to.deep.equal({
        status: 'error',
        code: 503000,
        message: 'the database is unavailable, try again later',
      });
      await request(app)
        .post('/block')
        .set('Authorization', await bearer('u'))
        .send({})
        .expect(503);
    });

    it('GET /readyz answers 503 naming mongodb', async () => {
      const res = await request(api.app({ db: connection.db }))
        .get('/readyz')
        .expect(503);
      expect(res.body.checks.mongodb.ok).to.equal(false);
      expect(res.body.checks.redis.ok).to.equal(true);
    });
  });

  describe('when a handler fails unexpectedly', () => {
    it('answers 500 without details or a stack trace', async () => {
      const app = api.app({
        messages: {
          locales: ['en'],
          defaultLocale: 'en',
          negotiate: () => 'en',
          render: () => {
            throw new Error('secret internals');
          },
        },
      });
      await insertRecords(api.db, [aTrayRecord({ userId: 'boom' })]);
      const res = await request(app)
        .get('/notifications/v3/history')
        .set('Authorization', await bearer('boom'))
        .expect(500);
      expect(res.body).to.deep.equal({ status: 'error', code: 500000, message: 'internal error' });
    });
  });
});

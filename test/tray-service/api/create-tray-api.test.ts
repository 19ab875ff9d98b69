import { expect } from 'chai';
import request from 'supertest';
import { helmetHeaders } from '../../../shared/http/helmet-headers.ts';
import type { TrayStorage } from '../../../tray-service/storage/port.ts';
import { bearer, useTrayApi } from './support/api-harness.ts';
import { seedRecords } from '../../support/seed-tray.ts';
import { useStoppablePostgres } from '../../support/use-stoppable-postgres.ts';

describe('tray API (operations)', () => {
  const api = useTrayApi();

  it('GET /healthz answers 200 { status: "ok" }', async () => {
    const res = await request(api.app()).get('/healthz').expect(200);
    expect(res.body).to.deep.equal({ status: 'ok' });
  });

  it('GET /readyz reports the storage (naming its engine) and Redis reachable', async () => {
    const res = await request(api.app()).get('/readyz').expect(200);
    expect(res.body.checks).to.deep.equal({
      storage: { ok: true, detail: { engine: api.storage.engine } },
      redis: { ok: true },
    });
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

  it("sends helmet's security headers with every answer: a tray call, an error, the OpenAPI document", async () => {
    const app = api.app();
    const answers = [
      await request(app)
        .get('/notifications/v3')
        .set('Authorization', await bearer('headers-user'))
        .expect(200),
      await request(app).get('/notifications/v3').expect(401),
      await request(app).get('/openapi.json').expect(200),
    ];
    const expected = helmetHeaders();
    expect(expected.get('x-content-type-options')).to.equal('nosniff');
    for (const answer of answers) {
      for (const [name, value] of expected) expect(answer.headers[name], name).to.equal(value);
    }
  });

  it('answers an unknown path with 404 and the JSON error shape', async () => {
    const res = await request(api.app()).get('/notifications/v9').expect(404);
    expect(res.body).to.deep.equal({
      status: 'error',
      code: 404000,
      message: 'no route for GET /notifications/v9',
    });
  });

  describe('when the database is down', function () {
    this.timeout(60_000);
    const postgres = useStoppablePostgres();
    let storage: TrayStorage;
    before(async () => {
      storage = await postgres.openStorage();
      // The user has records: the page must come through the stopped server.
      await seedRecords(storage, [{ userId: 'u' }]);
      await postgres.stop();
    });

    it('answers tray calls with 503 and the JSON error shape, no details', async () => {
      const app = api.app({ storage });
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

    it('GET /readyz answers 503 naming the storage', async () => {
      const res = await request(api.app({ storage })).get('/readyz').expect(503);
      expect(res.body.checks.storage.ok).to.equal(false);
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
      await seedRecords(api.storage, [{ userId: 'boom' }]);
      const res = await request(app)
        .get('/notifications/v3/history')
        .set('Authorization', await bearer('boom'))
        .expect(500);
      expect(res.body).to.deep.equal({ status: 'error', code: 500000, message: 'internal error' });
    });
  });
});

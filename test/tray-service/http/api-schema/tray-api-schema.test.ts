import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { createAdminOpenApiDocument } from '../../../../tray-service/admin/api-schema/admin-api-schema.ts';
import { createTrayOpenApiDocument } from '../../../../tray-service/http/api-schema/tray-api-schema.ts';
import { toDecisionDoc } from '../../../../tray-service/domain/decision-doc.ts';
import { BODY_LIMIT_KB, RECORDS_BODY_LIMIT_KB } from '../../../../tray-service/http/api-schema/body-limit.ts';
import { useTrayStorage } from '../../../support/use-tray-storage.ts';
import { useStoppablePostgres } from '../../../support/use-stoppable-postgres.ts';
import { seedRecords } from '../../../support/seed-tray.ts';
import {
  ADMIN_TOKEN,
  adminApp,
  adminJwt,
  eventDoc,
  storeEvents,
  userToken,
} from '../../admin/admin-fixtures.ts';
import { bearer, useTrayApi } from '../../api/support/api-harness.ts';
import { expectMatchesOpenApi } from '../../api/support/openapi-validator.ts';
import { documentedRoutes, servedRoutes } from '../../api/support/served-routes.ts';
import { useLiveTray } from '../../live/support/live-harness.ts';

describe('GET /openapi.json', () => {
  const api = useTrayApi({ rateLimit: 40 });
  const user = 'openapi-user';
  before(async () => {
    const now = Date.now();
    await seedRecords(api.storage, [
      {
        userId: user,
        verb: 'reaction',
        targetId: 'r1',
        parentTargetId: 'p1',
        lastActionSegmentNo: 3,
        lastUpdate: now - 1000,
        actors: [
          { userId: 'a', name: 'Ana', imageUrl: 'https://i/a', avatarCustomUrl: 'https://i/a-custom' },
          { userId: 'b', name: 'Ben' },
        ],
      },
      { userId: user, verb: 'mention', mentionIn: 'comment', targetId: 'm1', lastUpdate: now - 2000 },
    ]);
  });

  it('serves an OpenAPI 3.1 document describing every endpoint', async () => {
    const res = await request(api.app()).get('/openapi.json').expect(200);
    expect(res.body.openapi).to.equal('3.1.0');
    expect(Object.keys(res.body.paths)).to.include.members([
      '/notifications/v3',
      '/notifications/v3/history',
      '/notifications/v2/history',
      '/notifications/v3/mark-all-as-read',
      '/notifications/v2/last-read',
      '/notifications/v2/read',
      '/notifications/v3/delete-all',
      '/notifications/v3/stream',
      '/notifications/v3/stream-ticket',
      '/block/members',
      '/block',
    ]);
  });

  it('describes the real responses of every endpoint, success and errors', async () => {
    const app = api.app();
    const auth = await bearer(user);
    const calls: [string, string, (r: request.Agent) => request.Test][] = [
      ['GET', '/notifications/v3', (r) => r.get('/notifications/v3').set('Authorization', auth)],
      ['GET', '/notifications/v3', (r) => r.get('/notifications/v3')],
      [
        'GET',
        '/notifications/v3/history',
        (r) => r.get('/notifications/v3/history').set('Authorization', auth),
      ],
      [
        'GET',
        '/notifications/v3/history',
        (r) => r.get('/notifications/v3/history?startAfter=x').set('Authorization', auth),
      ],
      [
        'GET',
        '/notifications/v2/history',
        (r) => r.get('/notifications/v2/history?page=1').set('Authorization', auth),
      ],
      [
        'POST',
        '/notifications/v2/read',
        (r) =>
          r
            .post('/notifications/v2/read')
            .set('Authorization', auth)
            .send({ verb: 'mention', targetId: 'm1' }),
      ],
      [
        'POST',
        '/notifications/v2/read',
        (r) =>
          r
            .post('/notifications/v2/read')
            .set('Authorization', auth)
            .send({ verb: 'post', targetId: 'none' }),
      ],
      [
        'POST',
        '/notifications/v2/read',
        (r) =>
          r
            .post('/notifications/v2/read')
            .set('Authorization', auth)
            .set('Content-Type', 'text/plain')
            .send('x'),
      ],
      [
        'GET',
        '/notifications/v3/mark-all-as-read',
        (r) => r.get('/notifications/v3/mark-all-as-read').set('Authorization', auth),
      ],
      [
        'POST',
        '/notifications/v2/last-read',
        (r) => r.post('/notifications/v2/last-read').set('Authorization', auth),
      ],
      [
        'POST',
        '/block/members',
        (r) => r.post('/block/members').set('Authorization', auth).send({ blockUserId: 'x1' }),
      ],
      [
        'POST',
        '/block/members',
        (r) => r.post('/block/members').set('Authorization', auth).send({ blockUserId: [] }),
      ],
      [
        'GET',
        '/block/members',
        (r) => r.get('/block/members?checkList=x1&checkList=x2').set('Authorization', auth),
      ],
      ['POST', '/block', (r) => r.post('/block').set('Authorization', auth).send({})],
      [
        'DELETE',
        '/block/members',
        (r) => r.delete('/block/members').set('Authorization', auth).send({ blockUserId: 'x1' }),
      ],
      [
        'GET',
        '/notifications/v3/history',
        (r) => r.get('/notifications/v3/history?view=all').set('Authorization', auth),
      ],
      [
        'POST',
        '/notifications/v3/records/seen',
        (r) => r.post('/notifications/v3/records/seen').set('Authorization', auth).send({ all: true }),
      ],
      [
        'POST',
        '/notifications/v3/records/archive',
        (r) =>
          r
            .post('/notifications/v3/records/archive')
            .set('Authorization', auth)
            .send({ all: true, readOnly: true }),
      ],
      [
        'POST',
        '/notifications/v3/records/unarchive',
        (r) => r.post('/notifications/v3/records/unarchive').set('Authorization', auth).send({ all: true }),
      ],
      [
        'POST',
        '/notifications/v3/records/snooze',
        (r) =>
          r
            .post('/notifications/v3/records/snooze')
            .set('Authorization', auth)
            .send({ ids: [`mention_m1_${user}`], until: Date.now() + 60_000 }),
      ],
      [
        'POST',
        '/notifications/v3/records/unsnooze',
        (r) =>
          r
            .post('/notifications/v3/records/unsnooze')
            .set('Authorization', auth)
            .send({ ids: [`mention_m1_${user}`] }),
      ],
      [
        'PUT',
        '/notifications/v3/mutes',
        (r) =>
          r
            .put('/notifications/v3/mutes')
            .set('Authorization', auth)
            .send({ targetType: 'post', targetId: 'p1' }),
      ],
      ['GET', '/notifications/v3/mutes', (r) => r.get('/notifications/v3/mutes').set('Authorization', auth)],
      [
        'DELETE',
        '/notifications/v3/mutes',
        (r) => r.delete('/notifications/v3/mutes?targetType=post&targetId=p1').set('Authorization', auth),
      ],
      [
        'DELETE',
        '/notifications/v3/delete-all',
        (r) => r.delete('/notifications/v3/delete-all').set('Authorization', auth),
      ],
    ];
    // A read refuses a body that is not JSON (415) as a write does: described for each.
    for (const path of [
      '/notifications/v3',
      '/notifications/v3/history',
      '/notifications/v2/history',
      '/notifications/v3/mutes',
      '/block/members',
    ]) {
      calls.push([
        'GET',
        path,
        (r) => r.get(path).set('Authorization', auth).set('Content-Type', 'text/plain').send('x'),
      ]);
    }
    const agent = request.agent(app);
    const statuses: number[] = [];
    for (const [method, path, call] of calls) {
      const res = await call(agent);
      statuses.push(res.status);
      expectMatchesOpenApi(res, method, path);
    }
    expect(statuses).to.include.members([200, 400, 401, 404, 415]);
  });

  it('describes /metrics behind METRICS_TOKEN: 200 to its bearer, 401 to anyone else', async () => {
    const token = 'metrics-token-for-openapi-tests-0123456789';
    const app = api.app({ metrics: { kind: 'token', token } });
    const calls = [
      request(app).get('/metrics').set('Authorization', `Bearer ${token}`),
      request(app)
        .get('/metrics')
        .set('Authorization', await bearer(user)),
      request(app).get('/metrics'),
    ];
    const statuses: number[] = [];
    for (const call of calls) {
      const res = await call;
      statuses.push(res.status);
      expectMatchesOpenApi(res, 'GET', '/metrics');
    }
    expect(statuses).to.deep.equal([200, 401, 401]);
  });

  // A browser's EventSource opens the stream with ?ticket= and no header: the document said only
  // the bearer token authenticates it, so a generated client or a fuzzer could not know the ticket.
  it('says the stream takes either the bearer token or a ticket in the query', () => {
    const document = createTrayOpenApiDocument();
    expect(document.paths?.['/notifications/v3/stream']?.get?.security).to.deep.equal([
      { bearerAuth: [] },
      { streamTicket: [] },
    ]);
    expect(document.components?.securitySchemes?.streamTicket).to.include({
      type: 'apiKey',
      in: 'query',
      name: 'ticket',
    });
  });

  it('gives each 413 the body limit its route enforces: the records’ own, 16 kB elsewhere', () => {
    const limits: Record<string, string> = {};
    for (const [path, item] of Object.entries(createTrayOpenApiDocument().paths ?? {}))
      for (const method of ['get', 'put', 'post', 'delete'] as const) {
        const response = item[method]?.responses?.['413'] as { description?: string } | undefined;
        if (response?.description !== undefined) limits[`${method} ${path}`] = response.description;
      }
    const records = Object.keys(limits).filter((route) => route.includes('/v3/records/'));
    expect(records).to.have.length(5);
    for (const [route, description] of Object.entries(limits))
      expect(description, route).to.equal(
        `Body larger than ${records.includes(route) ? RECORDS_BODY_LIMIT_KB : BODY_LIMIT_KB} kB`,
      );
  });

  it('describes /metrics without METRICS_TOKEN: not served on the API listener (404)', async () => {
    const res = await request(api.app({ metrics: { kind: 'off' } })).get('/metrics');
    expect(res.status).to.equal(404);
    expectMatchesOpenApi(res, 'GET', '/metrics');
  });

  it('describes a history record with every optional field', async () => {
    const other = 'openapi-user-2';
    await seedRecords(api.storage, [
      {
        userId: other,
        verb: 'reaction',
        // A target of its own: Ana's action on r1 is stored already, at another time.
        targetId: 'r2',
        parentTargetId: 'p1',
        lastActionSegmentNo: 3,
        actors: [{ userId: 'a', name: 'Ana', imageUrl: 'https://i/a', avatarCustomUrl: 'https://i/c' }],
      },
    ]);
    const res = await request(api.app())
      .get('/notifications/v3/history')
      .set('Authorization', await bearer(other));
    expect(res.body.data[0]).to.include({
      avatarCustomUrl: 'https://i/c',
      parentTargetId: 'p1',
      lastActionSegmentNo: 3,
    });
    expectMatchesOpenApi(res, 'GET', '/notifications/v3/history');
  });

  it('describes the 429 answer', async () => {
    const app = api.app();
    const auth = await bearer('openapi-flood');
    let res = await request(app).get('/notifications/v3').set('Authorization', auth);
    while (res.status === 200) res = await request(app).get('/notifications/v3').set('Authorization', auth);
    expect(res.status).to.equal(429);
    expectMatchesOpenApi(res, 'GET', '/notifications/v3');
  });

  it('describes both 401s: a token refused (code 401000) and a globally banned user (401001)', async () => {
    const app = api.app({ bans: { isBanned: (userId) => userId === 'openapi-banned' } });
    const banned = await request(app)
      .get('/notifications/v3')
      .set('Authorization', await bearer('openapi-banned'));
    expect(banned.status).to.equal(401);
    expect(banned.body.code).to.equal(401001);
    expectMatchesOpenApi(banned, 'GET', '/notifications/v3');
    const refused = await request(app).get('/notifications/v3').set('Authorization', 'Bearer not-a-jwt');
    expect(refused.body.code).to.equal(401000);
    expectMatchesOpenApi(refused, 'GET', '/notifications/v3');
    // The document names the two codes a 401 carries, and no other.
    const otherCode = { status: 401, type: banned.type, body: { ...banned.body, code: 401002 }, text: '' };
    expect(() => expectMatchesOpenApi(otherCode, 'GET', '/notifications/v3')).to.throw();
  });

  it('describes a GET sent again with the ETag it answered: 304, no body', async () => {
    const app = api.app();
    const auth = await bearer(user);
    const first = await request(app).get('/notifications/v3/history').set('Authorization', auth).expect(200);
    expect(first.headers.etag).to.be.a('string');
    const again = await request(app)
      .get('/notifications/v3/history')
      .set('Authorization', auth)
      .set('If-None-Match', first.headers.etag as string)
      .expect(304);
    expect(again.headers.etag).to.equal(first.headers.etag);
    expectMatchesOpenApi(again, 'GET', '/notifications/v3/history');
  });

  // The headers a caller acts on are documented where they are sent: the check fails on one that is not.
  it('fails an answer carrying a header its operation does not document', async () => {
    const res = await request(api.app()).get('/healthz').expect(200);
    expectMatchesOpenApi(res, 'GET', '/healthz');
    const withLimit = { ...res, headers: { ...res.headers, 'x-ratelimit-limit': '40' } };
    expect(() => expectMatchesOpenApi(withLimit, 'GET', '/healthz')).to.throw(/x-ratelimit-limit/);
  });
});

describe('GET /openapi.json on the admin listener', () => {
  const suite = useTrayStorage();
  const postgres = useStoppablePostgres();
  let app: Express;
  let close: () => void;
  const admin = `Bearer ${ADMIN_TOKEN}`;
  const decided = new Date(Date.UTC(2026, 10, 20, 9));

  before(async () => {
    const events = [
      eventDoc({ key: 'oa-applied', status: 'applied' }),
      eventDoc({
        key: 'oa-unknown',
        event: 'thing.didHappen',
        status: 'unknown',
        error: 'unknown event name',
      }),
      eventDoc({ key: 'oa-invalid', status: 'invalid', error: 'data.post.postId: expected a string' }),
      eventDoc({ key: 'oa-stored', event: 'comment.didCreate', webhook: 'backup' }),
    ];
    await storeEvents(suite.storage, events);
    const decision = (id: string, delivery: 'off' | 'pending') =>
      toDecisionDoc(
        events[0]!,
        'blocked-words',
        {
          action: 'flag',
          reason: 'blocklisted words: "spam"',
          subject: { type: 'post', id },
          userId: 'u-ana',
        },
        { now: decided, delivery },
      );
    await suite.storage.decisions.saveAll([
      decision('p-off', 'off'),
      {
        ...decision('p-delivered', 'pending'),
        delivery: 'delivered' as const,
        deliveryAttempts: 2,
        deliveredAt: decided,
      },
      {
        ...decision('p-failed', 'pending'),
        delivery: 'failed' as const,
        deliveryAttempts: 10,
        lastError: 'HTTP 502',
      },
      toDecisionDoc(
        events[1]!,
        'repeat',
        { action: 'ban-request', reason: 'r', subject: { type: 'event', id: 'e' } },
        { now: decided, delivery: 'off' },
      ),
    ]);
    ({ app, close } = adminApp(suite.storage, { maxLimit: 3 }));
  });
  after(() => close());

  it('documents every admin JSON endpoint and the export, not the HTML queue dashboard', async () => {
    const res = await request(app).get('/openapi.json').expect(200);
    const paths = Object.keys(res.body.paths);
    expect(paths).to.include.members([
      '/admin/events',
      '/admin/events/export',
      '/admin/events/{key}',
      '/admin/moderation/decisions',
    ]);
    expect(paths.filter((path) => path.startsWith('/admin/queues'))).to.deep.equal([]);
    // The tray API's paths are its own listener's: the admin listener answers them 404.
    expect(paths.filter((path) => !path.startsWith('/admin/'))).to.deep.equal([]);
    expect(res.body.components.securitySchemes.adminAuth).to.include({ type: 'http', scheme: 'bearer' });
    expect(res.body.paths['/admin/events'].get.security).to.deep.equal([
      { adminAuth: [] },
      { adminSession: [] },
    ]);
    expect(res.body.components.securitySchemes.adminSession).to.include({ type: 'apiKey', in: 'cookie' });
  });

  it('gives the page limit this app enforces (ADMIN_LIST_MAX_LIMIT), not a fixed one', async () => {
    const res = await request(app).get('/openapi.json').expect(200);
    expect(res.body).to.deep.equal(
      JSON.parse(JSON.stringify(createAdminOpenApiDocument({ defaultLimit: 50, maxLimit: 3 }))),
    );
    const limit = (res.body.paths['/admin/events'].get.parameters as { name: string; schema: object }[]).find(
      (parameter) => parameter.name === 'limit',
    );
    expect(limit?.schema).to.deep.equal({ type: 'integer', minimum: 1, maximum: 3, default: 3 });
    await request(app).get('/admin/events?limit=4').set('Authorization', admin).expect(400);
  });

  it('leaves the admin paths out when the admin API is not mounted', () => {
    expect(
      Object.keys(createTrayOpenApiDocument().paths ?? {}).filter((path) => path.startsWith('/admin')),
    ).to.deep.equal([]);
  });

  it('describes the real responses of every admin endpoint, success and errors', async () => {
    const memberToken = `Bearer ${await userToken('u-ben', { role: 'member' })}`;
    const adminBearer = `Bearer ${await adminJwt('ops-root')}`;
    const first = await request(app).get('/admin/events').set('Authorization', admin);
    const calls: [string, string, request.Test][] = [
      ['GET', '/admin/events', request(app).get('/admin/events').set('Authorization', admin)],
      [
        'GET',
        '/admin/events',
        request(app).get(`/admin/events?cursor=${first.body.nextCursor}`).set('Authorization', admin),
      ],
      [
        'GET',
        '/admin/events',
        request(app).get('/admin/events?status=unknown&since=2026-01-01').set('Authorization', adminBearer),
      ],
      ['GET', '/admin/events', request(app).get('/admin/events?since=yesterday').set('Authorization', admin)],
      ['GET', '/admin/events', request(app).get('/admin/events?evnt=x').set('Authorization', admin)],
      ['GET', '/admin/events', request(app).get('/admin/events')],
      ['GET', '/admin/events', request(app).get('/admin/events').set('Authorization', 'Bearer wrong')],
      ['GET', '/admin/events', request(app).get('/admin/events').set('Authorization', memberToken)],
      [
        'GET',
        '/admin/events/{key}',
        request(app).get('/admin/events/oa-unknown').set('Authorization', admin),
      ],
      [
        'GET',
        '/admin/events/{key}',
        request(app).get('/admin/events/no-such-key').set('Authorization', admin),
      ],
      [
        'GET',
        '/admin/events/{key}',
        request(app).get('/admin/events/oa-unknown').set('Authorization', memberToken),
      ],
      ['GET', '/admin/events/export', request(app).get('/admin/events/export').set('Authorization', admin)],
      [
        'GET',
        '/admin/events/export',
        request(app).get('/admin/events/export?webhook=none').set('Authorization', admin),
      ],
      [
        'GET',
        '/admin/events/export',
        request(app).get('/admin/events/export?limit=1').set('Authorization', admin),
      ],
      ['GET', '/admin/events/export', request(app).get('/admin/events/export')],
      [
        'GET',
        '/admin/moderation/decisions',
        request(app).get('/admin/moderation/decisions').set('Authorization', admin),
      ],
      [
        'GET',
        '/admin/moderation/decisions',
        request(app)
          .get('/admin/moderation/decisions?delivery=failed&action=flag')
          .set('Authorization', admin),
      ],
      [
        'GET',
        '/admin/moderation/decisions',
        request(app).get('/admin/moderation/decisions?action=ban').set('Authorization', admin),
      ],
      [
        'GET',
        '/admin/moderation/decisions',
        request(app).get('/admin/moderation/decisions').set('Authorization', memberToken),
      ],
    ];
    const statuses: number[] = [];
    for (const [method, path, call] of calls) {
      const res = await call;
      statuses.push(res.status);
      expectMatchesOpenApi(res, method, path);
    }
    expect(statuses).to.include.members([200, 400, 401, 404]);
  });

  it('describes every optional field the admin views can carry', async () => {
    const events = await request(app).get('/admin/events?status=unknown').set('Authorization', admin);
    expect(events.body.items[0]).to.have.property('error');
    expectMatchesOpenApi(events, 'GET', '/admin/events');
    const decisions = await request(app).get('/admin/moderation/decisions').set('Authorization', admin);
    const fields = (decisions.body.items as object[]).flatMap((item) => Object.keys(item));
    expect(fields).to.include.members(['userId', 'deliveredAt', 'lastError']);
    expectMatchesOpenApi(decisions, 'GET', '/admin/moderation/decisions');
  });

  it('describes the NDJSON export line by line', async () => {
    const res = await request(app).get('/admin/events/export').set('Authorization', admin).expect(200);
    expect(res.text.trim().split('\n')).to.have.lengthOf(4);
    expectMatchesOpenApi(res, 'GET', '/admin/events/export');
  });

  describe('when the database cannot be reached', () => {
    it('describes the 503 answer of every admin endpoint', async function () {
      this.timeout(60_000);
      // A storage whose server has stopped: every query is refused.
      const storage = await postgres.openStorage();
      await postgres.stop();
      const down = adminApp(storage);
      try {
        for (const path of ['/admin/events', '/admin/events/some-key', '/admin/moderation/decisions']) {
          const res = await request(down.app).get(path).set('Authorization', admin).expect(503);
          expectMatchesOpenApi(res, 'GET', path === '/admin/events/some-key' ? '/admin/events/{key}' : path);
        }
      } finally {
        down.close();
      }
    });
  });
});

describe('the generated documents against the routes the apps serve', function () {
  this.timeout(60_000);
  const tray = useLiveTray({ instances: 1, demo: true });
  /** HTML pages and their assets (and /admin, a redirect to the console): served, but no JSON API. */
  const pages = (route: string) =>
    route === 'GET /admin' ||
    route.includes(' /demo') ||
    route.includes('/admin/queues/') ||
    /^(GET|POST) \/admin\/(login|logout|console)/.test(route);

  it('documents every route the tray API serves, and no route it does not serve', () => {
    const app = tray.api.app({
      live: tray.instance(0).live,
      demo: true,
      metrics: { kind: 'token', token: 'metrics-token-for-route-tests-0123456789' },
    });
    const served = servedRoutes(app).filter((route) => !pages(route));
    expect(served).to.deep.equal(documentedRoutes(createTrayOpenApiDocument()));
  });

  it('documents, on the admin listener, every route it serves, and no route it does not (the tray API’s neither)', () => {
    const admin = adminApp(tray.api.storage);
    try {
      // Its own document aside, as on the tray listener's (servicePaths documents that one).
      const served = servedRoutes(admin.app).filter(
        (route) => !pages(route) && route !== 'GET /openapi.json',
      );
      expect(served).to.deep.equal(
        documentedRoutes(createAdminOpenApiDocument({ defaultLimit: 50, maxLimit: 500 })),
      );
    } finally {
      admin.close();
    }
  });
});

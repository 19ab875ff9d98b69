import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { createAdminOpenApiDocument } from '../../../../tray-service/admin/api-schema/admin-api-schema.ts';
import { expectMatchesOpenApi } from '../../api/support/openapi-validator.ts';
import { documentedRoutes, servedRoutes } from '../../api/support/served-routes.ts';
import {
  commentDeleteEvent,
  commentEvent,
  dedupeKeyOf,
  membershipEvent,
  minute,
  postEvent,
} from '../../worker/event-builder.ts';
import { useWorker } from '../../worker/worker-harness.ts';
import { ADMIN_TOKEN, adminApp } from '../admin-fixtures.ts';

/**
 * Served on the admin listener but no JSON API: the sign-in pages, the events console's page and
 * its scripts and style sheets, and the document itself.
 */
const HTML_PAGES = new Set([
  // A redirect to the console.
  'GET /admin',
  'GET /admin/console',
  'GET /admin/console/assets/{name}',
  'GET /admin/login',
  'POST /admin/login',
  'GET /admin/logout',
  'POST /admin/logout',
  'GET /openapi.json',
]);

describe('the admin API’s OpenAPI document against the routes and responses', function () {
  this.timeout(60_000);
  const worker = useWorker();
  let app: Express;
  let close: () => void;
  const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
  const post = postEvent({ postId: 'p-oa', author: 'u-ana', createdAt: minute(2), mentions: ['u-eve'] });
  const removal = commentDeleteEvent();
  before(async () => {
    for (const envelope of [
      membershipEvent('join', ['u-ana', 'u-ben'], 'c-hike', minute(0)),
      post,
      commentEvent(),
      removal,
    ])
      await worker.deliver(envelope);
    ({ app, close } = adminApp(worker.storage, { blockedWords: [{ word: 'trail', mode: 'exact' }] }));
  });
  after(() => close());

  it('documents every JSON route the admin listener serves, and no route it does not serve', () => {
    // Every path of the document, not only /admin ones: a tray API path listed here would send a
    // client to the admin listener, which answers it 404.
    const documented = documentedRoutes(createAdminOpenApiDocument({ defaultLimit: 50, maxLimit: 500 }));
    const served = servedRoutes(app).filter(
      (route) => !HTML_PAGES.has(route) && !route.includes('/admin/queues/'),
    );
    expect(served).to.deep.equal(documented);
  });

  it('describes the real answers of the console’s endpoints', async () => {
    const key = dedupeKeyOf(post);
    const signedIn = await request(app)
      .post('/admin/login')
      .type('form')
      .send({ token: ADMIN_TOKEN })
      .expect(303);
    const cookie = String(signedIn.headers['set-cookie']).split(';')[0]!;
    const started = await request(app).post('/admin/events/replay').set(admin).send({ userId: 'u-ana' });
    const calls: [string, string, request.Test][] = [
      ['GET', '/admin/session', request(app).get('/admin/session').set('Cookie', cookie)],
      ['GET', '/admin/session', request(app).get('/admin/session').set(admin)],
      ['GET', '/admin/session', request(app).get('/admin/session')],
      ['GET', '/admin/events', request(app).get('/admin/events?userId=u-ana&moderation=none').set(admin)],
      ['GET', '/admin/events/{key}', request(app).get(`/admin/events/${key}`).set(admin)],
      [
        'GET',
        '/admin/events/{key}/recipients',
        request(app).get(`/admin/events/${key}/recipients?limit=1`).set(admin),
      ],
      ['GET', '/admin/events/{key}/recipients', request(app).get('/admin/events/nope/recipients').set(admin)],
      [
        'GET',
        '/admin/events/{key}',
        request(app)
          .get(`/admin/events/${dedupeKeyOf(removal)}`)
          .set(admin),
      ],
      [
        'GET',
        '/admin/events/{key}/tray-changes',
        request(app)
          .get(`/admin/events/${dedupeKeyOf(removal)}/tray-changes?limit=1`)
          .set(admin),
      ],
      [
        'GET',
        '/admin/events/{key}/tray-changes',
        request(app).get('/admin/events/nope/tray-changes').set(admin),
      ],
      ['GET', '/admin/events/export', request(app).get('/admin/events/export?format=csv').set(admin)],
      ['GET', '/admin/events/export/check', request(app).get('/admin/events/export/check').set(admin)],
      [
        'GET',
        '/admin/events/export/check',
        request(app).get('/admin/events/export/check?since=x').set(admin),
      ],
      [
        'GET',
        '/admin/stats/events-per-minute',
        request(app).get('/admin/stats/events-per-minute').set(admin),
      ],
      [
        'GET',
        '/admin/stats/events-per-minute',
        request(app).get('/admin/stats/events-per-minute?since=x').set(admin),
      ],
      ['GET', '/admin/stats/lag', request(app).get('/admin/stats/lag').set(admin)],
      ['GET', '/admin/stats/queue', request(app).get('/admin/stats/queue').set(admin)],
      [
        'POST',
        '/admin/moderation/test',
        request(app).post('/admin/moderation/test').set(admin).send({ text: 'Trail open' }),
      ],
      ['POST', '/admin/moderation/test', request(app).post('/admin/moderation/test').set(admin).send({})],
      [
        'POST',
        '/admin/moderation/test',
        request(app).post('/admin/moderation/test').set('Cookie', cookie).send({ text: 'x' }),
      ],
      ['POST', '/admin/events/{key}/replay', request(app).post(`/admin/events/${key}/replay`).set(admin)],
      ['POST', '/admin/events/{key}/replay', request(app).post('/admin/events/nope/replay').set(admin)],
      ['POST', '/admin/events/replay', request(app).post('/admin/events/replay').set(admin).send({ bad: 1 })],
      // Over the 16 kB body limit of the replay POSTs.
      [
        'POST',
        '/admin/events/replay',
        request(app)
          .post('/admin/events/replay')
          .set(admin)
          .send({ event: 'x'.repeat(20_000) }),
      ],
      [
        'POST',
        '/admin/events/{key}/replay',
        request(app)
          .post(`/admin/events/${key}/replay`)
          .set(admin)
          .send({ pad: 'x'.repeat(20_000) }),
      ],
      ['GET', '/admin/replays/{id}', request(app).get(`/admin/replays/${started.body.id}`).set(admin)],
      ['GET', '/admin/replays/{id}', request(app).get('/admin/replays/nope').set(admin)],
    ];
    expect(started.status).to.equal(202);
    expectMatchesOpenApi(started, 'POST', '/admin/events/replay');
    const statuses = new Set<number>();
    for (const [method, path, call] of calls) {
      const res = await call;
      statuses.add(res.status);
      expectMatchesOpenApi(res, method, path);
    }
    expect([...statuses].sort()).to.deep.equal([200, 400, 401, 403, 404, 413]);
  });
});

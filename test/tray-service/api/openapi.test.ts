import { expect } from 'chai';
import request from 'supertest';
import { bearer, useTrayApi } from './support/api-harness.ts';
import { expectMatchesOpenApi } from './support/openapi-validator.ts';
import { aTrayRecord, insertRecords } from './support/tray-record-builder.ts';

describe('GET /openapi.json', () => {
  const api = useTrayApi({ rateLimit: 40 });
  const user = 'openapi-user';
  before(async () => {
    const now = Date.now();
    await insertRecords(api.db, [
      aTrayRecord({
        userId: user,
        verb: 'reaction',
        targetId: 'r1',
        parentTargetId: 'p1',
        lastActionSegmentNo: 3,
        lastUpdate: now - 1000,
        actors: [
          {
            userId: 'a',
            name: 'Ana',
            imageUrl: 'https://i/a',
            avatarCustomUrl: 'https://i/a-custom',
            at: now,
          },
          { userId: 'b', name: 'Ben', at: now - 5 },
        ],
        actorsCount: 2,
      }),
      aTrayRecord({
        userId: user,
        verb: 'mention',
        mentionIn: 'comment',
        targetId: 'm1',
        lastUpdate: now - 2000,
      }),
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
        'DELETE',
        '/notifications/v3/delete-all',
        (r) => r.delete('/notifications/v3/delete-all').set('Authorization', auth),
      ],
    ];
    const agent = request.agent(app);
    const statuses: number[] = [];
    for (const [method, path, call] of calls) {
      const res = await call(agent);
      statuses.push(res.status);
      expectMatchesOpenApi(res, method, path);
    }
    expect(statuses).to.include.members([200, 400, 401, 404, 415]);
  });

  it('describes a history record with every optional field', async () => {
    const other = 'openapi-user-2';
    await insertRecords(api.db, [
      aTrayRecord({
        userId: other,
        verb: 'reaction',
        targetId: 'r1',
        parentTargetId: 'p1',
        lastActionSegmentNo: 3,
        actors: [
          { userId: 'a', name: 'Ana', imageUrl: 'https://i/a', avatarCustomUrl: 'https://i/c', at: 1 },
        ],
      }),
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
});

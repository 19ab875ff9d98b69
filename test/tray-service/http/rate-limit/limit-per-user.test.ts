import { expect } from 'chai';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import request from 'supertest';
import { createRateLimiter } from '../../../../tray-service/http/rate-limit/create-rate-limiter.ts';
import { REDIS_CALL_BUDGET_MS } from '../../../../shared/redis/hung-redis-breaker.ts';
import { freePort, startRedis, type LocalServer } from '../../../../scripts/lib/local-servers.ts';
import { createRedis, type RedisClient } from '../../../../shared/redis/create-redis.ts';
import type { TrayStorage } from '../../../../tray-service/storage/port.ts';
import { useHungRedis } from '../../../support/hung-redis.ts';
import { uniqueName } from '../../../support/suite-resources.ts';
import { waitFor } from '../../../support/wait-for.ts';
import { seedRecords } from '../../../support/seed-tray.ts';
import { bearer, useTrayApi } from '../../api/support/api-harness.ts';

describe('per-user rate limit (docs/contract.md#limits)', () => {
  // 5 calls per window here instead of 100 keeps the test short; the rule is the same.
  const api = useTrayApi({ rateLimit: 5 });

  describe('across two API instances sharing Redis', () => {
    it('counts the calls of both and answers the call over the limit with 429', async () => {
      const [first, second] = [api.app(), api.app()];
      const auth = await bearer('busy-user');
      for (let i = 0; i < 5; i++) {
        await request(i % 2 === 0 ? first : second)
          .get('/notifications/v3')
          .set('Authorization', auth)
          .expect(200);
      }
      const res = await request(second).get('/notifications/v3').set('Authorization', auth).expect(429);
      expect(res.body).to.deep.equal({ status: 'error', code: 400311, message: 'RateLimit Exceed' });
      expect(Number(res.headers['retry-after'])).to.be.within(1, 60);
      await request(first).get('/block/members?checkList=a').set('Authorization', auth).expect(429);
    });

    it('keeps a separate budget for each user', async () => {
      const app = api.app();
      const [spent, calm] = [await bearer('spent-user'), await bearer('calm-user')];
      for (let i = 0; i < 5; i++)
        await request(app).get('/notifications/v3').set('Authorization', spent).expect(200);
      await request(app).get('/notifications/v3').set('Authorization', spent).expect(429);
      // Another user's first call of the window: a whole budget of its own, less this call.
      const res = await request(app).get('/notifications/v3').set('Authorization', calm).expect(200);
      expect(res.headers['x-ratelimit-remaining']).to.equal('4');
      await request(app).get('/notifications/v3').set('Authorization', spent).expect(429);
    });
  });

  describe('reads ahead of their count (limitPerUserAhead)', () => {
    /** Two instances; `other` spends the caller's calls without `reader` hearing of it. */
    const staleReader = async (user: string) => {
      const [reader, other] = [api.app(), api.app()];
      const auth = await bearer(user);
      // The reader hears the caller has calls to spare (4 left of 5: more than the reserve)...
      await request(reader).get('/notifications/v3').set('Authorization', auth).expect(200);
      // ...then the other instance spends them all.
      for (let i = 0; i < 4; i++) {
        await request(other).get('/notifications/v3').set('Authorization', auth).expect(200);
      }
      return { reader, auth };
    };

    for (const path of ['/notifications/v3', '/notifications/v3/history', '/notifications/v2/history']) {
      it(`GET ${path}: a read that went ahead over the limit still answers 429, without the tray`, async () => {
        const user = uniqueName('ahead');
        await seedRecords(api.storage, [{ userId: user }]);
        const { reader, auth } = await staleReader(user);
        const res = await request(reader).get(path).set('Authorization', auth).expect(429);
        expect(res.body).to.deep.equal({ status: 'error', code: 400311, message: 'RateLimit Exceed' });
        expect(res.headers['x-ratelimit-remaining']).to.equal('0');
        // It learned: the next call waits for its count (and is refused) instead of reading.
        await request(reader).get(path).set('Authorization', auth).expect(429);
      });
    }

    // A bad input is refused at once, ahead of the count: the answer must still wait for it.
    for (const path of ['/notifications/v3/history?sort=asc', '/notifications/v2/history?page=0']) {
      it(`GET ${path}: a refused input that went ahead carries the count, or answers 429 over the limit`, async () => {
        const app = api.app();
        const caller = await bearer(uniqueName('ahead'));
        // Heard of, with calls to spare: its next read goes ahead of the count.
        await request(app).get('/notifications/v3').set('Authorization', caller).expect(200);
        const within = await request(app).get(path).set('Authorization', caller).expect(400);
        expect(within.headers['x-ratelimit-limit']).to.equal('5');
        expect(within.headers['x-ratelimit-remaining']).to.equal('3');
        const { reader, auth } = await staleReader(uniqueName('ahead'));
        const over = await request(reader).get(path).set('Authorization', auth).expect(429);
        expect(over.body).to.deep.equal({ status: 'error', code: 400311, message: 'RateLimit Exceed' });
      });
    }

    it('never lets a call that changes anything run before it is counted', async () => {
      const user = uniqueName('ahead');
      await seedRecords(api.storage, [{ userId: user }]);
      const { reader, auth } = await staleReader(user);
      await request(reader).get('/notifications/v3/mark-all-as-read').set('Authorization', auth).expect(429);
      const page = await api.storage.records.pageAfter(user, undefined, 10, Date.now());
      expect(page.records.map((record) => record.hasRead)).to.deep.equal([false]);
    });

    describe('with a limiter whose count takes 200 ms', () => {
      /** The real limiter, each count held back 200 ms; and when each count and storage read began and ended. */
      const slowly = () => {
        const events: string[] = [];
        const limiter = createRateLimiter({
          redis: api.redis,
          points: 100,
          windowMs: 60_000,
          keyPrefix: uniqueName('rl-slow'),
        });
        const rateLimiter = new Proxy(limiter, {
          get: (target, property, receiver) =>
            property === 'consume'
              ? async (key: string) => {
                  events.push('count starts');
                  await new Promise((resolve) => setTimeout(resolve, 200));
                  const state = await target.consume(key);
                  events.push('count ends');
                  return state;
                }
              : (Reflect.get(target, property, receiver) as unknown),
        }) as RateLimiterAbstract;
        const records = api.storage.records;
        const storage: TrayStorage = {
          ...api.storage,
          records: {
            ...records,
            countUnread: async (...args) => (events.push('read starts'), records.countUnread(...args)),
          },
        };
        return { app: api.app({ rateLimiter, storage }), events };
      };

      it('starts the read of a caller well within the limit first, and counts the call while it runs', async () => {
        const { app, events } = slowly();
        const auth = await bearer(uniqueName('ahead'));
        await request(app).get('/notifications/v3').set('Authorization', auth).expect(200);
        events.length = 0;
        const res = await request(app).get('/notifications/v3').set('Authorization', auth).expect(200);
        expect(events).to.deep.equal(['read starts', 'count starts', 'count ends']);
        expect(res.headers['x-ratelimit-remaining']).to.equal('98');
      });

      it('counts the first call of a caller it has not heard of before reading', async () => {
        const { app, events } = slowly();
        const auth = await bearer(uniqueName('ahead'));
        await request(app).get('/notifications/v3').set('Authorization', auth).expect(200);
        expect(events).to.deep.equal(['count starts', 'count ends', 'read starts']);
      });
    });
  });
});

// The limit must not take the tray down with Redis: while Redis is unreachable each instance
// counts in its own memory (docs/contract.md#limits), so calls are answered and still limited.
describe('per-user rate limit while its Redis is unreachable', function () {
  this.timeout(60_000);
  const api = useTrayApi();
  let dir: string;
  let port: number;
  let server: LocalServer | undefined;
  let redis: RedisClient;
  let keyPrefix: string;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'limiter-redis-'));
    port = await freePort();
    keyPrefix = uniqueName('rl');
    server = undefined;
  });
  afterEach(async () => {
    redis.disconnect();
    await server?.stop('SIGKILL').catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });
  const startServer = async () => {
    server = await startRedis({ dir, port });
    return server;
  };
  /** The app of one instance, its limiter on `redis` (3 calls per minute), and a caller's header. */
  const limitedApp = async (user: string) => {
    // Refused connections while the server is down are expected here, not news.
    redis.on('error', () => undefined);
    const rateLimiter = createRateLimiter({ redis, points: 3, windowMs: 60_000, keyPrefix });
    return { app: api.app({ rateLimiter }), auth: await bearer(user) };
  };
  const ready = async () => {
    if (redis.status !== 'ready') await once(redis, 'ready');
  };
  const inRedis = (user: string) => redis.get(`${keyPrefix}:${user}`);

  it('answers the calls within the limit and refuses the one over it, counting in memory', async () => {
    redis = createRedis((await startServer()).url);
    const { app, auth } = await limitedApp('limited-while-down');
    // The first call must reach Redis: a connection still opening would count it in memory (below).
    await ready();
    await request(app).get('/notifications/v3').set('Authorization', auth).expect(200);
    expect(await inRedis('limited-while-down')).to.equal('1');
    await server?.stop();
    // Memory has not heard of the call Redis counted: three more are answered, the fourth refused.
    for (let i = 0; i < 3; i++) {
      await request(app).get('/notifications/v3').set('Authorization', auth).expect(200);
    }
    const res = await request(app).get('/notifications/v3').set('Authorization', auth).expect(429);
    expect(res.body).to.deep.equal({ status: 'error', code: 400311, message: 'RateLimit Exceed' });
  });

  it('counts a call whose count was in flight when Redis stopped once, in memory', async () => {
    redis = createRedis((await startServer()).url);
    const { app, auth } = await limitedApp('in-flight');
    await ready();
    await request(app).get('/notifications/v3').set('Authorization', auth).expect(200);
    // The next count is held at the server (a paused write) until Redis stops under it.
    const admin = createRedis(`redis://127.0.0.1:${port}`);
    admin.on('error', () => undefined);
    try {
      await admin.call('CLIENT', 'PAUSE', '600000', 'WRITE');
      const heldAnswer = request(app)
        .get('/notifications/v3')
        .set('Authorization', auth)
        .then((res) => res);
      await waitFor(
        async () => /blocked_clients:1\b/.test(await admin.info('clients')),
        10_000,
        'the count held at the server',
      );
      await server?.stop();
      const res = await heldAnswer;
      expect(res.status).to.equal(200);
      expect(res.headers['x-ratelimit-remaining']).to.equal('2');
    } finally {
      admin.disconnect();
    }
    // Memory counted it once: two more calls are answered, the next refused.
    for (let i = 0; i < 2; i++) {
      await request(app).get('/notifications/v3').set('Authorization', auth).expect(200);
    }
    await request(app).get('/notifications/v3').set('Authorization', auth).expect(429);
  });

  // What a CI run once saw, a 429 at the third call after Redis stopped: the call before had
  // come while the limiter's connection was still opening, so memory had counted it already.
  it('still counts, once Redis stops, a call counted in memory before its connection was ready', async () => {
    redis = createRedis(`redis://127.0.0.1:${port}`);
    const { app, auth } = await limitedApp('early-caller');
    const early = await request(app).get('/notifications/v3').set('Authorization', auth).expect(200);
    expect(early.headers['x-ratelimit-remaining']).to.equal('2');
    await startServer();
    await ready();
    expect(await inRedis('early-caller')).to.equal(null);
    await server?.stop();
    // The fourth call of the minute, whichever store counted the first: the limit of 3 refuses it.
    for (let i = 0; i < 2; i++) {
      await request(app).get('/notifications/v3').set('Authorization', auth).expect(200);
    }
    const res = await request(app).get('/notifications/v3').set('Authorization', auth).expect(429);
    expect(res.body).to.deep.equal({ status: 'error', code: 400311, message: 'RateLimit Exceed' });
  });
});

// A Redis that stops answering but keeps its connection (a stopped server, a route that died
// without a reset) stays `ready`: every count waited on it, and with it every tray call, for as
// long as it hung.
describe('per-user rate limit while its Redis hangs', function () {
  this.timeout(30_000);
  const api = useTrayApi();
  const hung = useHungRedis();

  it('answers each call within the count’s budget, counting in memory, and refuses the one over the limit', async () => {
    const { redis, hang } = hung();
    const keyPrefix = uniqueName('rl');
    const app = api.app({
      rateLimiter: createRateLimiter({ redis, points: 3, windowMs: 60_000, keyPrefix }),
    });
    const auth = await bearer('limited-while-hung');
    await request(app).get('/notifications/v3').set('Authorization', auth).expect(200);
    expect(await api.redis.get(`${keyPrefix}:limited-while-hung`)).to.equal('1');
    hang();
    // Memory has not heard of the call Redis counted: three more are answered, the fourth refused.
    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      await request(app).get('/notifications/v3').set('Authorization', auth).timeout(4_000).expect(200);
      expect(Date.now() - started, `call ${i + 2}`).to.be.below(REDIS_CALL_BUDGET_MS + 1_000);
    }
    const res = await request(app)
      .get('/notifications/v3')
      .set('Authorization', auth)
      .timeout(4_000)
      .expect(429);
    expect(res.body).to.deep.equal({ status: 'error', code: 400311, message: 'RateLimit Exceed' });
  });
});

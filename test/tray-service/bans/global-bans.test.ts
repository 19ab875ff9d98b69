import { expect } from 'chai';
import type Bull from 'bull';
import type { Express } from 'express';
import request from 'supertest';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { createWebhookQueue, type WebhookJobData } from '../../../shared/queue/webhook-queue.ts';
import { startBanCache, type BanCache } from '../../../tray-service/http/auth/ban-cache.ts';
import { banKeys } from '../../../tray-service/bans/ban-keys.ts';
import { encodeRecordKey } from '../../../tray-service/domain/record-key.ts';
import type { WorkerDeps } from '../../../tray-service/worker/start-worker.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import { waitFor } from '../../support/wait-for.ts';
import { bearer, useTrayApi } from '../api/support/api-harness.ts';
import { commentEvent, membershipEvent, minute, postEvent } from '../worker/event-builder.ts';
import { quietWorker, useWorker, withMethod } from '../worker/worker-harness.ts';
import { banEvent } from './ban-events.ts';

/** The bound the tray promises between a stored ban (or unban) and every instance enforcing it. */
const BOUND_MS = 2_000;

/** Every tray and block call a user can make, each as its own request. */
const calls: Array<[string, (app: Express, auth: string) => request.Test]> = [
  ['GET /notifications/v3', (app, auth) => request(app).get('/notifications/v3').set('Authorization', auth)],
  [
    'GET /notifications/v3/history',
    (app, auth) => request(app).get('/notifications/v3/history').set('Authorization', auth),
  ],
  [
    'GET /notifications/v2/history',
    (app, auth) => request(app).get('/notifications/v2/history').set('Authorization', auth),
  ],
  [
    'GET /notifications/v3/mark-all-as-read',
    (app, auth) => request(app).get('/notifications/v3/mark-all-as-read').set('Authorization', auth),
  ],
  [
    'POST /notifications/v2/last-read',
    (app, auth) => request(app).post('/notifications/v2/last-read').set('Authorization', auth),
  ],
  [
    'POST /notifications/v2/read',
    (app, auth) =>
      request(app)
        .post('/notifications/v2/read')
        .set('Authorization', auth)
        .send({ verb: 'comment', targetId: 'p-eve' }),
  ],
  [
    'DELETE /notifications/v3/delete-all',
    (app, auth) => request(app).delete('/notifications/v3/delete-all').set('Authorization', auth),
  ],
  ['POST /block', (app, auth) => request(app).post('/block').set('Authorization', auth).send({})],
  [
    'GET /block/members',
    (app, auth) => request(app).get('/block/members?checkList=u-ana').set('Authorization', auth),
  ],
  [
    'POST /block/members',
    (app, auth) =>
      request(app).post('/block/members').set('Authorization', auth).send({ blockUserId: 'u-ana' }),
  ],
  [
    'DELETE /block/members',
    (app, auth) =>
      request(app).delete('/block/members').set('Authorization', auth).send({ blockUserId: 'u-ana' }),
  ],
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('global bans: queue -> worker -> storage and Redis -> two API instances', () => {
  const api = useTrayApi();
  // Its own check of the ban version is left out of the cases (an hour): run every 10 s, it
  // republished the set a case had taken away while that case watched another worker do it.
  const worker = useWorker({ bans: { prefix: api.banPrefix, checkMs: 3_600_000 } });
  let second: BanCache | undefined;
  /** Two instances: their own app and their own ban cache, sharing Redis and the database. */
  const instances: Array<[string, () => Express]> = [
    ['instance one', () => api.app({ storage: worker.storage })],
    [
      'instance two',
      () => {
        if (!second) throw new Error('second instance used before the suite started');
        return api.app({ storage: worker.storage, bans: second });
      },
    ],
  ];

  before(async () => {
    second = await startBanCache(api.redis, {
      prefix: api.banPrefix,
      refreshMs: 500,
      logger: createLogger({ name: 'test', level: 'silent' }),
    });
  });
  after(() => second?.stop());

  const status = async (app: Express, user: string) =>
    (
      await request(app)
        .get('/notifications/v3')
        .set('Authorization', await bearer(user))
    ).status;

  /** Milliseconds until `app` answers `expected` for `user`; fails past the bound. */
  async function timeUntil(app: Express, user: string, expected: number): Promise<number> {
    const started = Date.now();
    while (Date.now() - started <= BOUND_MS) {
      if ((await status(app, user)) === expected) return Date.now() - started;
      await sleep(25);
    }
    throw new Error(`still not ${expected} for ${user} after ${BOUND_MS} ms`);
  }

  /** Both instances answer `expected` for `user` within the bound of the last stored change. */
  async function bothWithinBound(user: string, expected: number): Promise<void> {
    const elapsed = await Promise.all(instances.map(([, app]) => timeUntil(app(), user, expected)));
    for (const ms of elapsed) expect(ms).to.be.at.most(BOUND_MS);
  }

  /** Both instances still answer `expected` after a full refresh of each cache has passed. */
  async function bothStill(user: string, expected: number): Promise<void> {
    await sleep(700);
    for (const [, app] of instances) expect(await status(app(), user)).to.equal(expected);
  }

  /**
   * Runs `body` beside another worker process's worker (its own queue, the suite's ban prefix) on
   * `storage`, and closes both after it.
   */
  async function withAnotherWorker(
    storage: WorkerDeps['storage'],
    bans: Partial<NonNullable<WorkerDeps['bans']>>,
    body: (queue: Bull.Queue<WebhookJobData>) => Promise<void>,
  ): Promise<void> {
    const queue = createWebhookQueue({ redis: testStack().redisUrl, prefix: useQueuePrefix() });
    const another = await quietWorker(queue, storage, { bans: { prefix: api.banPrefix, ...bans } });
    try {
      await body(queue);
    } finally {
      await another.close();
      await queue.close();
    }
  }

  /** Redis loses the published set, as a restart without its data does. */
  const loseTheSet = () => {
    const keys = banKeys(api.banPrefix);
    return api.redis.del(keys.rank, keys.banned, keys.version);
  };

  const storedBan = async (userId: string) =>
    (await worker.storage.bans.all()).find((change) => change.userId === userId) ?? null;

  describe('a user with a tray, a membership and a post of their own is banned', () => {
    before(async () => {
      await worker.deliver(membershipEvent('join', ['u-eve']));
      await worker.deliver(postEvent({ postId: 'p-eve', author: 'u-eve', createdAt: minute(1) }));
      await worker.deliver(
        commentEvent({
          postId: 'p-eve',
          postOwner: 'u-eve',
          author: 'u-cid',
          commentId: 'cm-e1',
          createdAt: minute(2),
        }),
      );
      for (const [, app] of instances) expect(await status(app(), 'u-eve')).to.equal(200);
      await worker.deliver(banEvent('ban', ['u-eve'], minute(60)));
    });

    it('is refused by both instances within 2 s of the ban being stored', async () => {
      await bothWithinBound('u-eve', 401);
    });

    for (const [name, call] of calls) {
      it(`answers ${name} with 401 invalid_token and the ban's own code, on both instances`, async () => {
        for (const [, app] of instances) {
          const res = await call(app(), await bearer('u-eve'));
          expect(res.status).to.equal(401);
          expect(res.headers['www-authenticate']).to.equal('Bearer error="invalid_token"');
          // Not a bad token's 401000: a client must not ask for another token, it would be refused too.
          expect(res.body).to.deep.equal({
            status: 'error',
            code: 401001,
            message: 'user is globally banned',
          });
        }
      });
    }

    it('keeps serving everybody else', async () => {
      for (const [, app] of instances) expect(await status(app(), 'u-cid')).to.equal(200);
    });

    it('leaves the user’s records and membership as they were, and stores the ban durably', async () => {
      expect((await worker.records('u-eve')).map((record) => record.key)).to.deep.equal([
        encodeRecordKey({ verb: 'comment', targetId: 'p-eve', userId: 'u-eve' }),
      ]);
      // Still a member: a community post made after the join and the ban still reaches the banned user.
      const now = new Date().toISOString();
      await worker.deliver(postEvent({ postId: 'p-ana', author: 'u-ana', createdAt: now }));
      expect((await worker.records('u-eve')).map((record) => record.key)).to.deep.equal([
        encodeRecordKey({ verb: 'comment', targetId: 'p-eve', userId: 'u-eve' }),
        encodeRecordKey({ verb: 'post', targetId: 'c-hike', userId: 'u-eve' }),
      ]);
      expect(await storedBan('u-eve')).to.include({ banned: true, at: Date.parse(minute(60)) });
    });

    it('ignores an unban older than the ban that arrives after it, on both instances', async () => {
      await worker.deliver(banEvent('unban', ['u-eve'], minute(30)));
      await bothStill('u-eve', 401);
      expect(await storedBan('u-eve')).to.include({ banned: true, at: Date.parse(minute(60)) });
    });

    it('lifts the ban on both instances within 2 s of a newer unban, with the tray intact', async () => {
      await worker.deliver(banEvent('unban', ['u-eve'], minute(90)));
      await bothWithinBound('u-eve', 200);
      const res = await request(instances[1]![1]())
        .get('/notifications/v3/history')
        .set('Authorization', await bearer('u-eve'))
        .expect(200);
      expect(res.body.data.map((record: { v_tarid_uid: string }) => record.v_tarid_uid)).to.have.members([
        'comment_p-eve_u-eve',
        'post_c-hike_u-eve',
      ]);
    });

    it('does not ban again when the older ban is delivered once more (a redelivery)', async () => {
      await worker.deliver(banEvent('ban', ['u-eve'], minute(60)));
      await bothStill('u-eve', 200);
      expect(await storedBan('u-eve')).to.include({ banned: false, at: Date.parse(minute(90)) });
    });
  });

  describe('bans and unbans delivered in every order, all at once', () => {
    it('end in the state of the newest createdAt, in storage and on both instances', async () => {
      await worker.deliverAll([
        banEvent('unban', ['u-fay', 'u-gus'], minute(40)),
        banEvent('ban', ['u-fay'], minute(10)),
        banEvent('ban', ['u-fay', 'u-gus'], minute(30)),
        banEvent('unban', ['u-fay'], minute(20)),
        banEvent('ban', ['u-fay'], minute(50)),
      ]);
      await bothWithinBound('u-fay', 401);
      await bothWithinBound('u-gus', 200);
      expect(await storedBan('u-fay')).to.include({ banned: true, at: Date.parse(minute(50)) });
      expect(await storedBan('u-gus')).to.include({ banned: false, at: Date.parse(minute(40)) });
    });

    it('keep the user banned when a ban and an unban share one createdAt, whichever comes last', async () => {
      await worker.deliver(banEvent('ban', ['u-hal'], minute(70)));
      await worker.deliver(banEvent('unban', ['u-hal'], minute(70)));
      await worker.deliver(banEvent('unban', ['u-ivy'], minute(70)));
      await worker.deliver(banEvent('ban', ['u-ivy'], minute(70)));
      await bothWithinBound('u-hal', 401);
      await bothWithinBound('u-ivy', 401);
      // Not a cache that had not caught up yet: stored, published and answered alike.
      for (const user of ['u-hal', 'u-ivy']) {
        expect(await storedBan(user)).to.include({ banned: true, at: Date.parse(minute(70)) });
        expect(await api.redis.sismember(banKeys(api.banPrefix).banned, user), user).to.equal(1);
      }
      await bothStill('u-hal', 401);
      await bothStill('u-ivy', 401);
    });
  });

  describe('a ban event without createdAt', () => {
    it('is stored as invalid and bans nobody', async () => {
      const envelope = { event: 'user.didGlobalBan', data: { userIds: ['u-jon'] } };
      const job = await worker.deliver(envelope);
      expect(await worker.event(job.data.dedupeKey)).to.include({ status: 'invalid' });
      expect(await storedBan('u-jon')).to.equal(null);
      await bothStill('u-jon', 200);
    });
  });

  describe('Redis coming back without the published set, the worker running', () => {
    it('keeps every instance refusing the banned user, and the worker publishes the stored bans again on reconnecting', async () => {
      await worker.deliver(banEvent('ban', ['u-lex'], minute(90)));
      await bothWithinBound('u-lex', 401);
      const keys = banKeys(api.banPrefix);
      await loseTheSet();
      await bothStill('u-lex', 401);
      // The worker's connection drops and comes back, as after a Redis restart.
      worker.queue.client.disconnect(true);
      const started = Date.now();
      while ((await api.redis.sismember(keys.banned, 'u-lex')) === 0 && Date.now() - started < BOUND_MS)
        await sleep(25);
      expect(await api.redis.sismember(keys.banned, 'u-lex')).to.equal(1);
      await bothStill('u-lex', 401);
    });
  });

  // A Redis that lost the set without the worker's connection dropping (a cluster failover to a
  // replica that lacks it): the next ban published only itself, and every instance loaded that
  // set, every earlier ban lifted.
  describe('a ban published while Redis has lost the set, with no reconnect', () => {
    it('publishes every stored ban again, and no instance ever loads the new ban alone', async () => {
      await worker.deliver(banEvent('ban', ['u-max'], minute(100)));
      await bothWithinBound('u-max', 401);
      const keys = banKeys(api.banPrefix);
      await loseTheSet();
      // Asked of both instances over and over, from before the new ban is delivered until both
      // enforce it: one instance loading the new ban alone would let u-max in meanwhile.
      let watching = true;
      const seen: number[] = [];
      const watch = (async () => {
        while (watching) for (const [, app] of instances) seen.push(await status(app(), 'u-max'));
      })();
      try {
        await worker.deliver(banEvent('ban', ['u-ned'], minute(101)));
        await bothWithinBound('u-ned', 401);
        await sleep(600); // one more refresh of the ban caches (every 500 ms)
      } finally {
        watching = false;
        await watch;
      }
      expect(seen.length, 'answers watched').to.be.above(10);
      expect([...new Set(seen)], 'what u-max was answered meanwhile').to.deep.equal([401]);
      await bothStill('u-max', 401);
      expect(
        (await api.redis.smembers(keys.banned)).filter((user) => /^u-(max|ned)$/.test(user)).sort(),
      ).to.deep.equal(['u-max', 'u-ned']);
    });
  });

  // Lost with nothing to tell the worker: no reconnect, no ban event. An API instance starting
  // then loaded what was left of the set (here nothing).
  describe('Redis losing the published set with no reconnect and no ban event', () => {
    it('is republished by the worker’s check, and an instance starting after it enforces every ban', async () => {
      await worker.deliver(banEvent('ban', ['u-pia'], minute(120)));
      await bothWithinBound('u-pia', 401);
      await withAnotherWorker(worker.storage, { checkMs: 100 }, async () => {
        await loseTheSet();
        const version = banKeys(api.banPrefix).version;
        await waitFor(async () => (await api.redis.exists(version)) === 1, 5_000, 'the version back');
        const fresh = await startBanCache(api.redis, {
          prefix: api.banPrefix,
          refreshMs: 60_000,
          logger: createLogger({ name: 'test', level: 'silent' }),
        });
        fresh.stop();
        expect(fresh.isBanned('u-pia')).to.equal(true);
      });
    });
  });

  // A failover to a replica that had not yet received the newest ban (replication is
  // asynchronous): the version is there, only older, so nothing looked lost; every instance loaded
  // the older set, and the ban stayed lifted for good.
  describe('Redis going back to an older published set (a failover to a lagging replica)', () => {
    it('is republished by the worker’s check under a new version, and both instances refuse the user again', async () => {
      const keys = banKeys(api.banPrefix);
      await withAnotherWorker(worker.storage, { checkMs: 100 }, async () => {
        const older = await Promise.all(
          [keys.rank, keys.banned, keys.version].map(
            async (key) => [key, await api.redis.dumpBuffer(key)] as const,
          ),
        );
        await worker.deliver(banEvent('ban', ['u-quin'], minute(130)));
        await bothWithinBound('u-quin', 401);
        const newer = Number(await api.redis.get(keys.version));
        // Seen by the other worker's check, which runs every 100 ms.
        await sleep(300);
        for (const [key, dump] of older) {
          if (dump) await api.redis.restore(key, 0, dump, 'REPLACE');
        }
        expect(await api.redis.sismember(keys.banned, 'u-quin')).to.equal(0);
        await waitFor(
          async () => (await api.redis.sismember(keys.banned, 'u-quin')) === 1,
          5_000,
          'u-quin published again',
        );
        expect(Number(await api.redis.get(keys.version))).to.be.above(newer);
        await bothWithinBound('u-quin', 401);
        await bothStill('u-quin', 401);
      });
    });
  });

  // The same failover with a ban published right after it, before any check: its count reached the
  // number the lost version had, so the check saw nothing go back, no instance loaded the new ban
  // (a number it had loaded already) and the lost ban stayed lifted for good.
  describe('Redis going back to an older published set, a ban published before any check', () => {
    it('is republished by the worker whose publish met the older count, and both instances refuse both users', async () => {
      const keys = banKeys(api.banPrefix);
      // A set published before the failover, which the replica had.
      await worker.deliver(banEvent('ban', ['u-wren'], minute(139)));
      await bothWithinBound('u-wren', 401);
      const older = await Promise.all(
        [keys.rank, keys.banned, keys.version].map(
          async (key) => [key, await api.redis.dumpBuffer(key)] as const,
        ),
      );
      await worker.deliver(banEvent('ban', ['u-xena'], minute(140)));
      await bothWithinBound('u-xena', 401);
      for (const [key, dump] of older) if (dump) await api.redis.restore(key, 0, dump, 'REPLACE');
      expect(await api.redis.sismember(keys.banned, 'u-xena')).to.equal(0);
      // The suite's worker checks the version once an hour: only its publish can tell.
      await worker.deliver(banEvent('ban', ['u-yuri'], minute(141)));
      await waitFor(
        async () => (await api.redis.sismember(keys.banned, 'u-xena')) === 1,
        5_000,
        'u-xena published again',
      );
      await bothWithinBound('u-yuri', 401);
      await bothWithinBound('u-xena', 401);
      await bothStill('u-xena', 401);
    });
  });

  // The reconnect's republish found the storage not answering (restarted with Redis): it was
  // logged and never tried again, so the set stayed empty until the next ban published it alone.
  describe('a republish after a reconnect that fails while the storage does not answer', () => {
    it('is tried again until it lands', async () => {
      await worker.deliver(banEvent('ban', ['u-oli'], minute(110)));
      await bothWithinBound('u-oli', 401);
      let failures = 0;
      const storage = {
        ...worker.storage,
        bans: withMethod(worker.storage.bans, 'all', (all) => async () => {
          if (failures > 0) {
            failures -= 1;
            throw new Error('connect ECONNREFUSED (the test: storage down)');
          }
          return all();
        }),
      };
      await withAnotherWorker(storage, {}, async (queue) => {
        await loseTheSet();
        failures = 2;
        queue.client.disconnect(true);
        const banned = banKeys(api.banPrefix).banned;
        await waitFor(
          async () => (await api.redis.sismember(banned, 'u-oli')) === 1,
          10_000,
          'u-oli published',
        );
        expect(failures).to.equal(0);
        await bothStill('u-oli', 401);
      });
    });
  });

  describe('Redis losing the published set', () => {
    it('is repaired by the next worker start from the stored bans, within 2 s on both instances', async () => {
      await worker.deliver(banEvent('ban', ['u-kim'], minute(80)));
      await bothWithinBound('u-kim', 401);
      const keys = banKeys(api.banPrefix);
      await api.redis.del(keys.rank, keys.banned);
      await api.redis.incr(keys.version);
      await bothWithinBound('u-kim', 200);

      // Another worker's start, and its close.
      await withAnotherWorker(worker.storage, {}, async () => undefined);
      await bothWithinBound('u-kim', 401);
    });
  });
});

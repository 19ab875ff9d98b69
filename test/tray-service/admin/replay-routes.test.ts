import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import type { TrayRecord } from '../../../tray-service/domain/tray-record.ts';
import {
  commentEvent,
  dedupeKeyOf,
  membershipEvent,
  minute,
  postEvent,
  reactionEvent,
  userUpdateEvent,
} from '../worker/event-builder.ts';
import { useWorker } from '../worker/worker-harness.ts';
import { SINGLE_REPLAYS_AT_ONCE } from '../../../tray-service/admin/replay-router.ts';
import { expectMatchesOpenApi } from '../api/support/openapi-validator.ts';
import { ADMIN_TOKEN, adminApp, sessionCookie } from './admin-fixtures.ts';

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };
const USERS = ['u-ana', 'u-ben', 'u-cid', 'u-dee', 'u-eve'];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('replaying stored events into the tray (POST /admin/events/:key/replay, /admin/events/replay)', function () {
  this.timeout(60_000);
  const worker = useWorker();
  let app: Express;
  let close: () => void;
  const join = membershipEvent('join', ['u-ana', 'u-ben', 'u-cid'], 'c-hike', minute(0));
  const post = postEvent({ postId: 'p-r1', author: 'u-ana', createdAt: minute(2), mentions: ['u-eve'] });
  const comment = commentEvent({
    commentId: 'cm-r1',
    postId: 'p-r1',
    author: 'u-cid',
    postOwner: 'u-ana',
    createdAt: minute(3),
  });
  const reaction = reactionEvent({
    reactionId: 'rx-r1',
    postId: 'p-r1',
    author: 'u-ben',
    postOwner: 'u-ana',
    createdAt: minute(4),
  });
  const profile = userUpdateEvent({ userId: 'u-dee', displayName: 'Dee D.' });
  const events = [join, post, comment, reaction, profile];

  /** Every user's tray as readers see it, with the unread count: what a replay must leave as it is. */
  const trays = async () => {
    const state: Record<string, { records: TrayRecord[]; unread: number }> = {};
    for (const user of USERS) {
      state[user] = {
        records: await worker.records(user),
        unread: await worker.storage.records.countUnread(user, 0, Date.now()),
      };
    }
    return state;
  };
  let original: Awaited<ReturnType<typeof trays>>;

  before(async () => {
    for (const envelope of events) await worker.deliver(envelope);
    original = await trays();
    expect(original['u-ana']!.records.length).to.be.above(0);
    ({ app, close } = adminApp(worker.storage, { replayMaxEvents: 4 }));
  });
  after(() => close());

  const waitDoneOn = async (on: Express, id: string) => {
    for (;;) {
      const res = await request(on).get(`/admin/replays/${id}`).set(admin).expect(200);
      if (res.body.state !== 'running') return res.body as Record<string, unknown>;
      await sleep(50);
    }
  };
  const waitDone = (id: string) => waitDoneOn(app, id);

  describe('one event', () => {
    it('replays through the apply path, and replaying twice changes nothing in any tray', async () => {
      for (const envelope of events) {
        const key = dedupeKeyOf(envelope);
        for (let n = 0; n < 2; n++) {
          const res = await request(app).post(`/admin/events/${key}/replay`).set(admin).expect(200);
          expect(res.body).to.deep.equal({ key, replayed: true, status: 'applied' });
        }
      }
      expect(await trays()).to.deep.equal(original);
    });
    it('puts back what a tray lost', async () => {
      await worker.storage.records.deleteAll('u-ana');
      expect(await worker.records('u-ana')).to.deep.equal([]);
      await request(app)
        .post(`/admin/events/${dedupeKeyOf(comment)}/replay`)
        .set(admin)
        .expect(200);
      const comments = (await worker.records('u-ana')).filter((record) => record.verb === 'comment');
      expect(comments.map((record) => record.lastActionId)).to.deep.equal(['cm-r1']);
      // Back to the state before: replay the rest, then compare the whole tray.
      for (const envelope of events) {
        await request(app)
          .post(`/admin/events/${dedupeKeyOf(envelope)}/replay`)
          .set(admin)
          .expect(200);
      }
      const after = await trays();
      const keysOf = (records: TrayRecord[]) =>
        records.map((record) => [record.key, record.lastActionId, record.actorsCount]);
      expect(keysOf(after['u-ana']!.records)).to.deep.equal(keysOf(original['u-ana']!.records));
    });
    it('answers 404 for an unknown key', async () => {
      await request(app).post('/admin/events/no-such-key/replay').set(admin).expect(404);
    });
    // Each runs the worker's whole apply path inline, outside the worker's own concurrency.
    it(`runs at most ${SINGLE_REPLAYS_AT_ONCE} at once on an instance, answering one more 429 with Retry-After`, async () => {
      let open: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (open = resolve));
      let running = 0;
      const holding = adminApp(worker.storage, {
        apply: {
          onStored: async () => {
            running += 1;
            await held;
            return undefined;
          },
        },
      });
      try {
        const key = dedupeKeyOf(post);
        const replay = () => request(holding.app).post(`/admin/events/${key}/replay`).set(admin);
        const first = Array.from({ length: SINGLE_REPLAYS_AT_ONCE }, () => replay().then((res) => res));
        while (running < SINGLE_REPLAYS_AT_ONCE) await sleep(10);
        const refused = await replay().expect(429);
        expect(refused.body).to.include({ status: 'error', code: 429003 });
        expect(refused.headers['retry-after']).to.equal('1');
        expectMatchesOpenApi(refused, 'POST', '/admin/events/{key}/replay');
        open();
        expect((await Promise.all(first)).map((res) => res.status)).to.deep.equal(
          Array.from({ length: SINGLE_REPLAYS_AT_ONCE }, () => 200),
        );
        await replay().expect(200);
      } finally {
        open();
        holding.close();
      }
    });
  });

  describe('a filter, in the background', () => {
    it('answers 202 with its id and Location, runs to done with every event counted, and changes no tray', async () => {
      const before = await trays();
      for (let n = 0; n < 2; n++) {
        const res = await request(app)
          .post('/admin/events/replay')
          .set(admin)
          .send({ communityId: 'c-hike' })
          .expect(202);
        expect(res.headers.location).to.equal(`/admin/replays/${res.body.id}`);
        expect(res.body.total).to.equal(4);
        const done = await waitDone(res.body.id);
        expect(done).to.include({ id: res.body.id, state: 'done', total: 4, done: 4, failed: 0 });
        expect(done.filter).to.deep.equal({ communityId: 'c-hike' });
        expect(Date.parse(String(done.finishedAt))).to.be.at.least(Date.parse(String(done.startedAt)));
      }
      expect(await trays()).to.deep.equal(before);
    });
    it('puts back what trays lost: every matching event applied again', async () => {
      const before = await trays();
      for (const user of USERS) await worker.storage.records.deleteAll(user);
      expect((await trays())['u-ana']!.records).to.deep.equal([]);
      const res = await request(app)
        .post('/admin/events/replay')
        .set(admin)
        .send({ communityId: 'c-hike' })
        .expect(202);
      expect(await waitDone(res.body.id)).to.include({ state: 'done', done: 4, failed: 0 });
      const keysOf = (records: TrayRecord[]) =>
        records.map((record) => [record.key, record.lastActionId, record.actorsCount]);
      const after = await trays();
      for (const user of USERS)
        expect(keysOf(after[user]!.records), user).to.deep.equal(keysOf(before[user]!.records));
    });
    // The document requires a body; without one the handler read an empty filter and replayed
    // every stored event (up to REPLAY_MAX_EVENTS): a bare POST, a curl without -d, did that.
    it('refuses a replay without a body, naming it, and starts nothing ({} is every event)', async () => {
      const res = await request(app).post('/admin/events/replay').set(admin).expect(400);
      expect(res.body).to.deep.equal({
        status: 'error',
        code: 400001,
        message: 'body: send the events filter as a JSON object ({} replays every stored event)',
      });
    });
    it('refuses a filter matching more than the most one replay may take, naming it', async () => {
      const res = await request(app).post('/admin/events/replay').set(admin).send({}).expect(400);
      expect(res.body.message).to.match(/^filter: matches more than 4 events, at most 4 per replay/);
    });
    // Every other call that selects events takes its filter in the query: a replay sent that way
    // read only its (empty) body, and replayed every stored event up to REPLAY_MAX_EVENTS.
    it('refuses a filter sent as query parameters, naming them, and starts nothing', async () => {
      const res = await request(app).post('/admin/events/replay?userId=u-dee').set(admin).expect(400);
      expect(res.body).to.deep.equal({
        status: 'error',
        code: 400001,
        message: 'userId: unknown query parameter',
      });
      const hidden = await request(app)
        .post(`/admin/events/replay?${'&'.repeat(1000)}userId=u-dee`)
        .set(admin)
        .expect(400);
      expect(hidden.body.message).to.equal('userId: unknown query parameter');
      const key = dedupeKeyOf(profile);
      for (const [method, path] of [
        ['post', `/admin/events/${key}/replay?dryRun=true`],
        ['get', '/admin/replays/some-id?verbose=1'],
        ['get', `/admin/events/${key}?fields=all`],
        ['post', '/admin/moderation/test?text=x'],
      ] as const) {
        const refused = await request(app)[method](path).set(admin).send({ text: 'x' }).expect(400);
        expect(refused.body.message, path).to.match(/^\w+: unknown query parameter$/);
      }
    });

    it('answers 400 naming an unknown or bad field, and 404 for an unknown replay', async () => {
      const unknown = await request(app)
        .post('/admin/events/replay')
        .set(admin)
        .send({ evnt: 'x' })
        .expect(400);
      expect(unknown.body.message).to.equal('evnt: unknown field');
      const bad = await request(app)
        .post('/admin/events/replay')
        .set(admin)
        .send({ since: 'soon' })
        .expect(400);
      expect(bad.body.message).to.equal('since: expected an ISO 8601 time');
      // A body that is no object is named as the body, with the API's wording, on both replays.
      for (const path of ['/admin/events/replay', '/admin/events/some-key/replay']) {
        const array = await request(app).post(path).set(admin).send([]).expect(400);
        expect(array.body, path).to.deep.equal({
          status: 'error',
          code: 400001,
          message: 'body: expected a JSON object',
        });
      }
      const nul = await request(app)
        .post('/admin/events/replay')
        .set(admin)
        .send({ userId: 'a\u0000' })
        .expect(400);
      expect(nul.body).to.deep.equal({
        status: 'error',
        code: 400001,
        message: 'userId: expected no U+0000 character and no lone surrogate',
      });
      await request(app)
        .post('/admin/events/replay')
        .set(admin)
        .set('Content-Type', 'text/plain')
        .send('x')
        .expect(415);
      await request(app).get('/admin/replays/no-such-replay').set(admin).expect(404);
      const malformed = await request(app).get('/admin/replays/%zz').set(admin).expect(400);
      expect(malformed.body).to.deep.equal({
        status: 'error',
        code: 400000,
        message: 'malformed URL encoding',
      });
    });
  });

  // A replay read its page while an event was still kept and stored it after it had expired: the
  // store took it for a new event, kept it another whole retention from then, and counted,
  // moderated and announced it again as new. An event that close to its end is left alone.
  describe('an event about to expire', () => {
    const DAY = 86_400_000;
    const ahead = 10 * 60_000;
    let late: ReturnType<typeof adminApp>;
    let key: string;
    let first: { storedAt: number; expiresAt: number };
    before(async () => {
      // The apply path's clock 10 minutes ahead: the event, 2 minutes from its end, has expired there.
      late = adminApp(worker.storage, { apply: { now: () => Date.now() + ahead } });
      const now = Date.now();
      const stored = await worker.storage.events.store(
        {
          key: 'about-to-expire',
          event: 'follow.didCreate',
          data: { follow: { followerId: 'u-ana', followeeId: 'u-ben' } },
          webhook: 'main',
          receivedAt: new Date(now - DAY + 2 * 60_000),
        },
        { status: 'stored' },
        { retentionDays: 1, now: new Date(now) },
      );
      key = stored.key;
      first = { storedAt: stored.storedAt.getTime(), expiresAt: stored.expiresAt.getTime() };
    });
    after(() => late.close());
    const asStored = async () => {
      const event = await worker.storage.events.get(key);
      return event && { storedAt: event.storedAt.getTime(), expiresAt: event.expiresAt.getTime() };
    };

    it('is not replayed alone: 410 naming why, and it stays as stored', async () => {
      const res = await request(late.app).post(`/admin/events/${key}/replay`).set(admin).expect(410);
      expect(res.body.message).to.match(/expires/);
      expect(await asStored()).to.deep.equal(first);
    });
    it('is counted as expired by a replay of a filter, and stays as stored', async () => {
      const res = await request(late.app)
        .post('/admin/events/replay')
        .set(admin)
        .send({ event: 'follow.didCreate' })
        .expect(202);
      const done = await waitDoneOn(late.app, res.body.id);
      expect(done).to.include({ state: 'done', total: 1, done: 0, failed: 0, expired: 1 });
      expect(await asStored()).to.deep.equal(first);
    });
  });

  describe('with the session cookie', () => {
    let cookie: string;
    let csrfToken: string;
    before(async () => {
      cookie = await sessionCookie(app);
      csrfToken = (await request(app).get('/admin/session').set('Cookie', cookie).expect(200)).body.csrfToken;
    });

    it('refuses a replay without the session’s x-csrf-token (403), and it changes nothing', async () => {
      await worker.storage.records.deleteAll('u-eve');
      const key = dedupeKeyOf(post);
      await request(app).post(`/admin/events/${key}/replay`).set('Cookie', cookie).expect(403);
      await request(app)
        .post('/admin/events/replay')
        .set('Cookie', cookie)
        .send({ userId: 'u-ana' })
        .expect(403);
      await sleep(300);
      expect(await worker.records('u-eve')).to.deep.equal([]);
      // The same request with the token does replay: the 403 was the guard, not the route.
      await request(app)
        .post(`/admin/events/${key}/replay`)
        .set('Cookie', cookie)
        .set('x-csrf-token', csrfToken)
        .expect(200);
      expect((await worker.records('u-eve')).map((record) => record.verb)).to.deep.equal(['mention']);
    });
  });

  describe('replays running at once (REPLAY_MAX_RUNNING)', () => {
    it('refuses one more than the limit with 429 (code 429003) while they run, and takes it once one is done', async () => {
      // The first replay's events wait here until the test lets them through.
      let entered: () => void = () => undefined;
      const inside = new Promise<void>((resolve) => (entered = resolve));
      let letThrough: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (letThrough = resolve));
      const gated = adminApp(worker.storage, {
        apply: {
          onStored: async () => {
            entered();
            await gate;
            return undefined;
          },
        },
        deps: { replayMaxRunning: 1 },
      });
      try {
        const first = await request(gated.app)
          .post('/admin/events/replay')
          .set(admin)
          .send({ communityId: 'c-hike' })
          .expect(202);
        await inside;
        const refused = await request(gated.app)
          .post('/admin/events/replay')
          .set(admin)
          .send({ communityId: 'c-hike' })
          .expect(429);
        expect(refused.body.code).to.equal(429003);
        expect(refused.headers['retry-after']).to.match(/^\d+$/);
        letThrough();
        const done = await waitDoneOn(gated.app, first.body.id);
        expect(done.state).to.equal('done');
        await request(gated.app)
          .post('/admin/events/replay')
          .set(admin)
          .send({ communityId: 'c-hike' })
          .expect(202);
      } finally {
        letThrough();
        gated.close();
      }
    });
  });
});

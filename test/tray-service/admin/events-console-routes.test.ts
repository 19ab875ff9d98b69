import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import type { StoredEvent } from '../../../tray-service/domain/stored-event.ts';
import { createBlockedWordsRule } from '../../../tray-service/moderation/blocked-words-rule.ts';
import { createModerationStep } from '../../../tray-service/moderation/create-moderation-step.ts';
import { commentEvent, dedupeKeyOf, membershipEvent, minute, postEvent } from '../worker/event-builder.ts';
import { useWorker, type WorkerHarness } from '../worker/worker-harness.ts';
import { ADMIN_TOKEN, adminApp } from './admin-fixtures.ts';

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

/** The blocked-words rule on `spam`, as the worker runs it after storing each event. */
function moderatedWorker(): WorkerHarness {
  const harness: WorkerHarness = useWorker({ onStored: (event: StoredEvent) => step()(event) });
  const step = () =>
    createModerationStep({
      rules: [createBlockedWordsRule([{ word: 'spam', mode: 'exact' }])],
      decisions: harness.storage.decisions,
      logger: createLogger({ name: 'test', level: 'silent' }),
    });
  return harness;
}

describe('admin events API: the console’s filters, an event’s detail and its recipients', function () {
  this.timeout(30_000);
  const worker = moderatedWorker();
  let app: Express;
  let close: () => void;
  const join = membershipEvent('join', ['u-ana', 'u-ben', 'u-cid', 'u-dee'], 'c-hike', minute(0));
  const leave = membershipEvent('leave', ['u-dee'], 'c-hike', minute(3));
  const post = postEvent({ author: 'u-ana', createdAt: minute(5), mentions: ['u-ben', 'u-eve'] });
  (post.data.post as { text: string }).text = 'Buy spam here';
  const comment = commentEvent({ author: 'u-cid', postOwner: 'u-ana', createdAt: minute(6) });
  const otherCommunity = postEvent({
    postId: 'p-200',
    author: 'u-zed',
    communityId: 'c-run',
    createdAt: minute(7),
  });
  const keyOf = (envelope: typeof post) => dedupeKeyOf(envelope);

  before(async () => {
    for (const envelope of [join, leave, post, comment, otherCommunity]) {
      await worker.deliver(envelope, { receivedAt: new Date(Date.now() - 60_000).toISOString() });
    }
    ({ app, close } = adminApp(worker.storage));
  });
  after(() => close());

  const list = async (query: string) =>
    (
      (await request(app).get(`/admin/events?${query}`).set(admin).expect(200)).body.items as {
        key: string;
      }[]
    ).map((item) => item.key);

  describe('GET /admin/events filters', () => {
    it('?userId= finds the events of the acting user (a join of several users has none)', async () => {
      expect(await list('userId=u-ana')).to.deep.equal([keyOf(post)]);
      expect(await list('userId=u-cid')).to.deep.equal([keyOf(comment)]);
      expect(await list('userId=u-dee')).to.deep.equal([keyOf(leave)]);
    });
    it('?communityId= finds what happened in one community', async () => {
      expect((await list('communityId=c-hike')).sort()).to.deep.equal(
        [join, leave, post, comment].map(keyOf).sort(),
      );
      expect(await list('communityId=c-run')).to.deep.equal([keyOf(otherCommunity)]);
    });
    it('?moderation= by the decisions the worker’s rules made', async () => {
      expect(await list('moderation=flag')).to.deep.equal([keyOf(post)]);
      expect(await list('moderation=any')).to.deep.equal([keyOf(post)]);
      expect(await list('moderation=ban-request')).to.deep.equal([]);
      const none = await list('moderation=none');
      expect(none).to.have.lengthOf(4);
      expect(none).to.not.include(keyOf(post));
    });
    it('shows the subject and the outcome on each item', async () => {
      const res = await request(app).get('/admin/events?userId=u-ana').set(admin).expect(200);
      expect(res.body.items[0]).to.include({ userId: 'u-ana', communityId: 'c-hike', moderation: 'flag' });
      expect(Date.parse(res.body.items[0].appliedAt)).to.be.at.least(
        Date.parse(res.body.items[0].receivedAt),
      );
    });
    it('answers 400 naming a bad moderation value', async () => {
      const res = await request(app).get('/admin/events?moderation=blocked').set(admin).expect(400);
      expect(res.body.message).to.equal('moderation: expected none, any, flag, ban-request');
    });
  });

  describe('the traffic charts, fed by the worker', () => {
    it('count every event the worker stored, and one lag each', async () => {
      const chart = await request(app).get('/admin/stats/events-per-minute').set(admin).expect(200);
      const counts = (chart.body.series as { event: string; counts: number[] }[]).map((series) => [
        series.event,
        series.counts.reduce((sum, n) => sum + n, 0),
      ]);
      expect(counts).to.deep.equal([
        ['comment.didCreate', 1],
        ['community.didJoin', 1],
        ['community.didLeave', 1],
        ['post.didCreate', 2],
      ]);
      const lag = await request(app).get('/admin/stats/lag').set(admin).expect(200);
      expect(lag.body.overall.count).to.equal(5);
      // Received a minute before the worker applied them (the deliveries' receivedAt).
      expect(lag.body.overall.max).to.be.within(60_000, 70_000);
    });
  });

  describe('GET /admin/events/:key', () => {
    it('adds the mapping’s activities, the recipients and the decisions', async () => {
      const res = await request(app)
        .get(`/admin/events/${keyOf(post)}`)
        .set(admin)
        .expect(200);
      expect(res.body).to.include({ key: keyOf(post), event: 'post.didCreate', moderation: 'flag' });
      expect(
        res.body.activities.map((a: { verb: string; audience: unknown }) => [a.verb, a.audience]),
      ).to.deep.equal([
        ['post', { kind: 'community', communityId: 'c-hike' }],
        ['mention', { kind: 'user', userId: 'u-ben' }],
        ['mention', { kind: 'user', userId: 'u-eve' }],
      ]);
      expect(res.body.activities[0].at).to.equal(minute(5));
      expect(res.body.recipients).to.deep.equal({
        users: ['u-ben', 'u-cid', 'u-eve'],
        total: 3,
        community: { communityId: 'c-hike', at: minute(5) },
      });
      expect(res.body.decisions).to.have.lengthOf(1);
      expect(res.body.decisions[0]).to.include({
        eventKey: keyOf(post),
        rule: 'blocked-words',
        action: 'flag',
      });
    });
    it('names as recipients exactly the users whose tray the event changed', async () => {
      const res = await request(app)
        .get(`/admin/events/${keyOf(post)}`)
        .set(admin)
        .expect(200);
      const changed: string[] = [];
      for (const user of ['u-ana', 'u-ben', 'u-cid', 'u-dee', 'u-eve', 'u-zed']) {
        const records = await worker.records(user);
        if (records.some((record) => record.lastActionId === 'p-100')) changed.push(user);
      }
      expect(res.body.recipients.users).to.deep.equal(changed);
    });
    it('gives a join its memberships and a comment its one personal recipient', async () => {
      const joined = await request(app)
        .get(`/admin/events/${keyOf(join)}`)
        .set(admin)
        .expect(200);
      expect(joined.body.memberships).to.have.lengthOf(4);
      expect(joined.body.recipients).to.deep.equal({ users: [], total: 0 });
      const commented = await request(app)
        .get(`/admin/events/${keyOf(comment)}`)
        .set(admin)
        .expect(200);
      expect(commented.body.recipients).to.deep.equal({ users: ['u-ana'], total: 1 });
    });
  });

  describe('GET /admin/events/:key/recipients', () => {
    it('pages the recipients in id order', async () => {
      const first = await request(app)
        .get(`/admin/events/${keyOf(post)}/recipients?limit=2`)
        .set(admin)
        .expect(200);
      expect(first.body.items).to.deep.equal(['u-ben', 'u-cid']);
      expect(first.body.nextCursor).to.be.a('string');
      const second = await request(app)
        .get(`/admin/events/${keyOf(post)}/recipients?limit=2&cursor=${first.body.nextCursor}`)
        .set(admin)
        .expect(200);
      expect(second.body).to.deep.equal({ items: ['u-eve'], nextCursor: null });
    });
    it('answers 404 for an unknown event and 400 for a cursor it did not hand out', async () => {
      await request(app).get('/admin/events/nope/recipients').set(admin).expect(404);
      const res = await request(app)
        .get(`/admin/events/${keyOf(post)}/recipients?cursor=x`)
        .set(admin)
        .expect(400);
      expect(res.body.message).to.equal('cursor: not a cursor this API returned');
    });
  });
});

describe('admin events API: the recipients of an action held back from a member who had left', function () {
  this.timeout(30_000);
  const worker = moderatedWorker();
  let app: Express;
  let close: () => void;
  const join = membershipEvent('join', ['u-ana', 'u-cid'], 'c-hike', minute(0));
  const leave = membershipEvent('leave', ['u-ana'], 'c-hike', minute(3));
  const present = commentEvent({
    commentId: 'cm-1',
    author: 'u-cid',
    postOwner: 'u-ana',
    createdAt: minute(2),
  });
  const away = commentEvent({ commentId: 'cm-2', author: 'u-cid', postOwner: 'u-ana', createdAt: minute(4) });

  before(async () => {
    for (const envelope of [join, leave, present, away]) await worker.deliver(envelope);
    ({ app, close } = adminApp(worker.storage));
  });
  after(() => close());

  it('names the post owner for the comment made while she was there, and nobody for the one made after she left', async () => {
    const records = await worker.records('u-ana');
    expect(records.map((record) => record.lastActionId)).to.deep.equal(['cm-1']);
    const recipients = async (envelope: typeof away) =>
      (
        await request(app)
          .get(`/admin/events/${dedupeKeyOf(envelope)}`)
          .set(admin)
          .expect(200)
      ).body.recipients;
    expect(await recipients(present)).to.deep.equal({ users: ['u-ana'], total: 1 });
    expect(await recipients(away)).to.deep.equal({ users: [], total: 0 });
    const page = await request(app)
      .get(`/admin/events/${dedupeKeyOf(away)}/recipients`)
      .set(admin)
      .expect(200);
    expect(page.body).to.deep.equal({ items: [], nextCursor: null });
  });
});

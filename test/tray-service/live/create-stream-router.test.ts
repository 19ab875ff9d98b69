import { expect } from 'chai';
import request from 'supertest';
import type { NotificationRecord } from '../../../tray-service/http/to-notification-record.ts';
import { bearer } from '../api/support/api-harness.ts';
import { expectMatchesOpenApi } from '../api/support/openapi-validator.ts';
import { banEvent } from '../bans/ban-events.ts';
import { commentDeleteEvent, commentEvent, minute } from '../worker/event-builder.ts';
import { useLiveTray } from './support/live-harness.ts';
import { dataOf, lastId, named, openSse, type SseEvent, type SseStream } from './support/sse-client.ts';

const STREAM = '/notifications/v3/stream';

/** A comment by u-cid on `owner`'s post `postId`: one `comment` record for the owner. */
const comment = (owner: string, postId: string, at: number) =>
  commentEvent({
    postId,
    postOwner: owner,
    author: 'u-cid',
    commentId: `cm-${postId}-${at}`,
    createdAt: minute(at),
  });

const recordId = (owner: string, postId: string) => `comment_${postId}_${owner}`;

/** The first event of a stream's tray after its own id (`opened`): no heartbeat comment. */
const tallied = (event: SseEvent) => event.event !== 'comment' && event.event !== 'opened';

describe('GET /notifications/v3/stream (live tray)', function () {
  this.timeout(60_000);
  const tray = useLiveTray({ instances: 2, streamsPerUser: 3, heartbeatMs: 300, ticketTtlSeconds: 1 });
  const open: SseStream[] = [];
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
  });

  async function stream(instance: number, user: string, query = '', headers: Record<string, string> = {}) {
    const opened = await openSse(`${tray.instance(instance).base}${STREAM}${query}`, {
      Authorization: await bearer(user),
      ...headers,
    });
    open.push(opened);
    return opened;
  }

  /**
   * What v3 history returns for `id` in `locale`: the record event of a worker's write, or of a
   * catch-up, must be exactly this, inbox state included (docs/live-tray.md).
   */
  async function historyRecord(
    user: string,
    id: string,
    locale = 'en',
  ): Promise<NotificationRecord | undefined> {
    const page = await request(tray.instance(0).base)
      .get(`/notifications/v3/history?locale=${locale}`)
      .set('Authorization', await bearer(user));
    return (page.body.data as NotificationRecord[]).find((record) => record.v_tarid_uid === id);
  }

  const records = (events: readonly SseEvent[]) =>
    events.filter(named('record')).map((event) => dataOf<NotificationRecord>(event));

  describe('every event type, through the queue and the worker, on two instances', () => {
    const user = 'u-olga';
    let one: SseStream;
    let two: SseStream;

    before(async () => {
      // Held for the whole describe, so not closed after each test like the helper's streams.
      one = await openSse(`${tray.instance(0).base}${STREAM}`, { Authorization: await bearer(user) });
      two = await openSse(`${tray.instance(1).base}${STREAM}?locale=de`, {
        Authorization: await bearer(user),
      });
    });
    after(() => {
      one.close();
      two.close();
    });

    it('answers text/event-stream and sends the stream its own id first, then the unread count', async () => {
      expect(one.status).to.equal(200);
      expect(one.headers['content-type']).to.equal('text/event-stream; charset=utf-8');
      expect(two.headers['content-language']).to.equal('de');
      const ids: string[] = [];
      for (const s of [one, two]) {
        await s.next(named('unread'));
        const [opened, unread] = s.events.filter((event) => event.event !== 'comment');
        expect(opened?.event).to.equal('opened');
        expect(opened?.id).to.be.a('string').and.not.equal('');
        const { streamId } = dataOf<{ streamId: string }>(opened!);
        expect(streamId).to.match(/^[0-9a-z]{9}-[0-9a-f-]{36}$/);
        ids.push(streamId);
        expect(unread?.event).to.equal('unread');
        expect(dataOf(unread!)).to.deep.equal({ totalUnreadCount: 0, totalUnseenCount: 0 });
      }
      expect(ids[0]).to.not.equal(ids[1]);
    });

    it('sends a record the worker wrote to the streams on both instances, as v3 history returns it', async () => {
      await tray.worker.deliver(comment(user, 'p-o1', 10));
      const id = recordId(user, 'p-o1');
      const onOne = await one.next(named('record'));
      const onTwo = await two.next(named('record'));
      expect(dataOf(onOne)).to.deep.equal(await historyRecord(user, id));
      // The stream's locale (de) renders the description, like history with ?locale=de.
      expect(dataOf(onTwo)).to.deep.equal(await historyRecord(user, id, 'de'));
      expect(dataOf<NotificationRecord>(onTwo).description).to.not.equal(
        dataOf<NotificationRecord>(onOne).description,
      );
      for (const s of [one, two]) {
        const count = await s.next(
          (event) =>
            event.event === 'unread' && dataOf<{ totalUnreadCount: number }>(event).totalUnreadCount === 1,
        );
        expect(count.id).to.be.a('string').and.not.equal('');
      }
    });

    // Each wait looks only at events sent after the action: the streams are shared by these tests,
    // and their first event was already an unread count of 0.
    it('sends read and the new count when a record is marked read through either instance', async () => {
      const from = [one.events.length, two.events.length];
      const marked = await request(tray.instance(1).base)
        .post('/notifications/v2/read')
        .set('Authorization', await bearer(user))
        .send({ verb: 'comment', targetId: 'p-o1' });
      expect(marked.status).to.equal(200);
      for (const [i, s] of [one, two].entries()) {
        const read = await s.next(named('read'), { from: from[i] });
        expect(dataOf(read)).to.deep.equal({ ids: [recordId(user, 'p-o1')] });
        await s.next(
          (event) =>
            event.event === 'unread' && dataOf<{ totalUnreadCount: number }>(event).totalUnreadCount === 0,
          { from: from[i] },
        );
      }
    });

    it('sends read for mark-all-as-read', async () => {
      const from = [one.events.length, two.events.length];
      await tray.worker.deliver(comment(user, 'p-o2', 11));
      await one.next(
        (event) =>
          event.event === 'unread' && dataOf<{ totalUnreadCount: number }>(event).totalUnreadCount === 1,
        { from: from[0] },
      );
      const marked = await request(tray.instance(0).base)
        .get('/notifications/v3/mark-all-as-read')
        .set('Authorization', await bearer(user));
      expect(marked.status).to.equal(200);
      const reads = await Promise.all([one, two].map((s, i) => s.next(named('read'), { from: from[i] })));
      for (const read of reads) expect(dataOf(read)).to.deep.equal({ ids: [recordId(user, 'p-o2')] });
    });

    it('sends record for a record a deletion shrank and removed for one it left empty, with the count', async () => {
      const id = recordId(user, 'p-100');
      for (const [author, commentId, at] of [
        ['u-cid', 'cm-o7', 12],
        ['u-dee', 'cm-o8', 13],
      ] as const)
        await tray.worker.deliver(
          commentEvent({ postId: 'p-100', postOwner: user, author, commentId, createdAt: minute(at) }),
        );
      // The second comment's record reaches the streams after deliver() returns (through Redis);
      // waited for here, so the record looked for below can only be the deletion's.
      for (const s of [one, two])
        await s.next(
          (event) =>
            event.event === 'record' &&
            dataOf<NotificationRecord>(event).v_tarid_uid === id &&
            dataOf<NotificationRecord>(event).actorsCount === 2,
        );
      const shrinking = [one.events.length, two.events.length];
      await tray.worker.deliver(commentDeleteEvent({ commentId: 'cm-o8', author: 'u-dee' }));
      const shrunk = await historyRecord(user, id);
      expect(shrunk?.actorsCount).to.equal(1);
      // Each stream in its own locale, as history renders it.
      for (const [i, [s, locale]] of (
        [
          [one, 'en'],
          [two, 'de'],
        ] as const
      ).entries())
        expect(dataOf(await s.next(named('record'), { from: shrinking[i] }))).to.deep.equal(
          await historyRecord(user, id, locale),
        );
      const removing = [one.events.length, two.events.length];
      await tray.worker.deliver(commentDeleteEvent({ commentId: 'cm-o7' }));
      expect(await historyRecord(user, id)).to.equal(undefined);
      for (const [i, s] of [one, two].entries()) {
        expect(dataOf(await s.next(named('removed'), { from: removing[i] }))).to.deep.equal({ ids: [id] });
        await s.next(
          (event) =>
            event.event === 'unread' && dataOf<{ totalUnreadCount: number }>(event).totalUnreadCount === 0,
          { from: removing[i] },
        );
      }
    });

    it('sends cleared when the tray is deleted through either instance', async () => {
      const deleted = await request(tray.instance(1).base)
        .delete('/notifications/v3/delete-all')
        .set('Authorization', await bearer(user));
      expect(deleted.status).to.equal(200);
      for (const s of [one, two]) expect(dataOf(await s.next(named('cleared')))).to.deep.equal({});
    });

    it('gives every event an id and sends a comment heartbeat', async () => {
      await one.next(named('comment'));
      const events = one.events.filter((event) => event.event !== 'comment');
      expect(events.map((event) => event.event)).to.include.members([
        'unread',
        'record',
        'read',
        'removed',
        'cleared',
      ]);
      for (const event of events)
        expect(event.id, event.event).to.match(/^[0-9a-z]+(~[0-9a-z]+)?(\.[\w-]{8}[0-9a-z]+)*$/);
    });

    it('counts open streams and events sent in /metrics', async () => {
      const metrics = await request(tray.instance(1).base).get('/metrics');
      expect(metrics.text).to.match(/tray_streams_open\{service="tray-service"\} [1-9]/);
      expect(metrics.text).to.match(
        /tray_stream_events_total\{event="record",service="tray-service"\} [1-9]/,
      );
    });
  });

  describe('a reconnect with Last-Event-ID', () => {
    const user = 'u-rita';

    it('gets the count and exactly the records changed since, then nothing twice', async () => {
      const first = await stream(0, user);
      await tray.worker.deliver(comment(user, 'p-r1', 20));
      await first.next(named('record'));
      await first.next(
        (event) =>
          event.event === 'unread' && dataOf<{ totalUnreadCount: number }>(event).totalUnreadCount === 1,
      );
      const resumeFrom = lastId(first.events);
      first.close();

      // While away: two new records, and the first one marked read.
      await tray.worker.deliver(comment(user, 'p-r2', 21));
      await tray.worker.deliver(comment(user, 'p-r3', 22));
      await request(tray.instance(1).base)
        .post('/notifications/v2/read')
        .set('Authorization', await bearer(user))
        .send({ verb: 'comment', targetId: 'p-r1' });

      const again = await stream(1, user, '', { 'Last-Event-ID': resumeFrom });
      const unread = await again.next(tallied);
      expect(unread.event).to.equal('unread');
      expect(dataOf(unread)).to.deep.equal({ totalUnreadCount: 2, totalUnseenCount: 2 });
      await again.next(
        (event) => event.event === 'record' && dataOf<NotificationRecord>(event).targetId === 'p-r3',
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      const caught = records(again.events);
      expect(caught.map((record) => [record.targetId, record.hasRead])).to.have.deep.members([
        ['p-r1', true],
        ['p-r2', false],
        ['p-r3', false],
      ]);
      for (const record of caught)
        expect(record).to.deep.equal(await historyRecord(user, record.v_tarid_uid));

      // Live again: one new record arrives once; a reconnect right after repeats nothing.
      await tray.worker.deliver(comment(user, 'p-r4', 23));
      await again.next(
        (event) => event.event === 'record' && dataOf<NotificationRecord>(event).targetId === 'p-r4',
      );
      await again.next(
        (event) =>
          event.event === 'unread' && dataOf<{ totalUnreadCount: number }>(event).totalUnreadCount === 3,
      );
      const latest = again.events.filter((event) => event.id !== undefined).at(-1)?.id ?? '';
      again.close();
      const third = await stream(0, user, '', { 'Last-Event-ID': latest });
      await third.next(named('unread'));
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(records(third.events)).to.deep.equal([]);
      // Every record state arrived once on the resumed stream: the catch-up and live delivery never overlap.
      const received = records(again.events).map((record) => record.targetId);
      expect(received).to.have.members(['p-r1', 'p-r2', 'p-r3', 'p-r4']);
    });

    it('accepts the id as ?lastEventId= too (a new EventSource cannot set the header)', async () => {
      const first = await stream(0, user);
      const unread = await first.next(named('unread'));
      first.close();
      await tray.worker.deliver(comment(user, 'p-r5', 24));
      const again = await stream(1, user, `?lastEventId=${encodeURIComponent(unread.id ?? '')}`);
      // Records of the few seconds before the first stream opened may come again (stamped before
      // their writes landed, they may have landed after its client read its history); p-r5, from
      // after it opened, comes only from the id: a new stream sends nothing from before it opened.
      const caught = await again.next(
        (event) => event.event === 'record' && dataOf<NotificationRecord>(event).targetId === 'p-r5',
        { timeoutMs: 3_000 },
      );
      expect(caught.id).to.be.a('string');
    });

    // A proxy that adds the header to every request sends it empty: that names no id, and the
    // query's is the client's own.
    it('takes ?lastEventId= over an empty Last-Event-ID header', async () => {
      const first = await stream(0, user);
      const unread = await first.next(named('unread'));
      first.close();
      await tray.worker.deliver(comment(user, 'p-r6', 25));
      const again = await stream(1, user, `?lastEventId=${encodeURIComponent(unread.id ?? '')}`, {
        'Last-Event-ID': '',
      });
      const caught = await again.next(
        (event) => event.event === 'record' && dataOf<NotificationRecord>(event).targetId === 'p-r6',
        { timeoutMs: 3_000 },
      );
      expect(caught.id).to.be.a('string');
    });

    it('tells the client to reset when the id is older than a day, before any event gives it a new id', async () => {
      const old = (Date.now() - 2 * 86_400_000).toString(36);
      const again = await stream(0, user, '', { 'Last-Event-ID': old });
      expect((await again.next(tallied)).event).to.equal('reset');
      await again.next(named('unread'));
      // A connection lost between `opened` and `reset` must leave the client its old id, so that
      // its reconnect is told to reset again: an id from `opened` would owe it nothing before it.
      const reset = again.events.findIndex(named('reset'));
      const before = again.events.slice(0, reset).filter((event) => event.event !== 'comment');
      expect(before.map(({ event, id }) => [event, id])).to.deep.equal([['opened', undefined]]);
      expect(again.events[reset]?.id).to.be.a('string').and.not.equal('');
      expect(records(again.events)).to.deep.equal([]);
    });

    it("moves a quiet stream's id forward with its heartbeats, so it resumes after a day without change", async () => {
      const quiet = 'u-quinn';
      // Resumed from an id a day old less 2.5 s: the stream delivers nothing for longer than that,
      // so every id of a real event it sent is more than a day old by then.
      const dayOld = (Date.now() - 86_400_000 + 2_500).toString(36);
      const first = await stream(0, quiet, '', { 'Last-Event-ID': dayOld });
      await first.next(named('unread'));
      await new Promise((resolve) => setTimeout(resolve, 3_500));
      // A heartbeat moved the id to an hour before now: a block with an id and no data, which a
      // browser's EventSource takes as the last event id without dispatching an event.
      const moved = first.events.filter((event) => event.id !== undefined && event.data === '');
      expect(moved, JSON.stringify(first.events)).to.not.deep.equal([]);
      const resumeFrom = lastId(first.events);
      expect(parseInt(resumeFrom.split(/[.~]/)[0] ?? '', 36)).to.be.within(
        Date.now() - 3_600_000 - 5_000,
        Date.now() - 3_600_000,
      );
      first.close();
      await tray.worker.deliver(comment(quiet, 'p-q1', 30));
      const again = await stream(1, quiet, '', { 'Last-Event-ID': resumeFrom });
      const caught = await again.next(named('record'));
      expect(dataOf<NotificationRecord>(caught).targetId).to.equal('p-q1');
      expect(again.events.filter(named('reset'))).to.deep.equal([]);
    });

    // Sent by an instance whose clock runs more than a minute ahead of this one's: refused with
    // 400, the client's stream ended for good (a 400 cannot pass by trying again).
    it('answers an id naming a time later than its clock allows with `reset`, not resuming from it', async () => {
      const ahead = (ms: number) => (Date.now() + ms).toString(36);
      for (const id of [
        // A year ahead: resumed, its catch-up would skip every change until then.
        ahead(365 * 86_400_000),
        ahead(10 * 60_000),
        `${Date.now().toString(36)}~${ahead(10 * 60_000)}`,
      ]) {
        const reset = await stream(0, user, '', { 'Last-Event-ID': id });
        expect(reset.status, id).to.equal(200);
        await reset.next(named('reset'));
        const opened = reset.events.find(named('opened'));
        expect(opened?.id, `${id}: the opening's id`).to.equal(undefined);
        reset.close();
      }
      // Past 2^53 is no time at all: not an id this service sent.
      const refused = await stream(0, user, '', { 'Last-Event-ID': 'zzzzzzzzzzz' });
      expect(refused.status).to.equal(400);
      expect(JSON.parse(await refused.body()).message).to.include('Last-Event-ID');
      // A writer's clock a few seconds ahead of this one's: still an id the service sent.
      const resumed = await stream(0, user, '', { 'Last-Event-ID': ahead(3_000) });
      expect(resumed.status).to.equal(200);
      expect((await resumed.next(named('unread'))).event).to.equal('unread');
    });

    it('refuses an id it never sent with 400, naming Last-Event-ID', async () => {
      const refused = await stream(0, user, '', { 'Last-Event-ID': 'not an id' });
      expect(refused.status).to.equal(400);
      expect(JSON.parse(await refused.body())).to.deep.include({ status: 'error', code: 400001 });
      expect(JSON.parse(await refused.body()).message).to.include('Last-Event-ID');
    });
  });

  describe('limits and auth', () => {
    it('refuses a stream without a token with 401 in the JSON error shape', async () => {
      const refused = await openSse(`${tray.instance(0).base}${STREAM}`);
      expect(refused.status).to.equal(401);
      expect(JSON.parse(await refused.body())).to.deep.include({ status: 'error', code: 401000 });
    });

    it('holds at most STREAMS_PER_USER streams per user across instances: the next takes the place of the oldest', async () => {
      const user = 'u-lim';
      const held = [await stream(0, user), await stream(1, user), await stream(0, user)];
      for (const s of held) expect(s.status).to.equal(200);
      await Promise.all(held.map((s) => s.next(named('unread'))));
      const next = await stream(1, user);
      expect(next.status).to.equal(200);
      const replaced = await held[0]?.next(named('replaced'));
      expect(replaced && dataOf(replaced)).to.deep.equal({
        reason: 'stream-limit',
        reconnect: false,
      });
      await held[0]?.ended;
      // The others stay; another user is not affected.
      for (const s of held.slice(1)) expect(s.events.filter(named('replaced'))).to.deep.equal([]);
      expect((await stream(1, 'u-other')).status).to.equal(200);
    });

    it('gives a reconnect naming its client’s previous stream (?replaces=) that stream’s place, on any instance, not the oldest’s', async () => {
      const user = 'u-lim-replaces';
      const held = [await stream(0, user), await stream(1, user), await stream(0, user)];
      const ids: string[] = [];
      for (const s of held) ids.push(dataOf<{ streamId: string }>(await s.next(named('opened'))).streamId);
      await Promise.all(held.map((s) => s.next(named('unread'))));
      // The second, on the other instance, is the one whose client went silent and reconnects.
      const next = await stream(0, user, `?replaces=${ids[1]}`);
      expect(next.status).to.equal(200);
      await held[1]?.next(named('replaced'));
      await held[1]?.ended;
      // The oldest stays, and still gets what changes: a replaced stream would have ended.
      await tray.worker.deliver(comment(user, 'p-lim-r', 12));
      for (const s of [held[0], held[2], next]) {
        await s?.next(named('record'));
        expect(s?.events.filter(named('replaced'))).to.deep.equal([]);
      }
    });

    it('refuses a body (a resume id sent there would be ignored), 400 or 415, opening nothing', async () => {
      const base = tray.instance(0).base;
      const user = 'u-stream-body';
      const json = await request(base)
        .get(STREAM)
        .set('Authorization', await bearer(user))
        .set('Content-Type', 'application/json')
        .send('{"lastEventId":"x"}')
        .timeout(5_000)
        .expect(400);
      expect(json.body).to.deep.equal({
        status: 'error',
        code: 400001,
        message: 'body: unknown field lastEventId',
      });
      await request(base)
        .get(STREAM)
        .set('Authorization', await bearer(user))
        .set('Content-Type', 'text/plain')
        .send('lastEventId=x')
        .timeout(5_000)
        .expect(415);
      expect(tray.instance(0).live.hub.size).to.equal(0);
    });

    it('refuses a ?replaces= that is not a stream id with 400, naming it', async () => {
      const refused = await stream(0, 'u-lim-bad', '?replaces=not-a-stream-id');
      expect(refused.status).to.equal(400);
      expect(JSON.parse(await refused.body())).to.deep.include({ status: 'error', code: 400001 });
      expect(JSON.parse(await refused.body()).message).to.include('replaces');
    });

    it('closes the streams of a user banned globally, and refuses new ones', async () => {
      const user = 'u-ban';
      const streams = [await stream(0, user), await stream(1, user)];
      await Promise.all(streams.map((s) => s.next(named('unread'))));
      await tray.worker.deliver(banEvent('ban', [user], minute(30)));
      const started = Date.now();
      await Promise.all(streams.map((s) => s.ended));
      expect(Date.now() - started).to.be.below(2_000);
      const refused = await stream(0, user);
      expect(refused.status).to.equal(401);
      expect(JSON.parse(await refused.body())).to.deep.equal({
        status: 'error',
        code: 401001,
        message: 'user is globally banned',
      });
      // A stream that ended is counted as a request, but its duration is no request latency.
      const metrics = (await request(tray.instance(0).base).get('/metrics')).text;
      expect(metrics).to.match(
        /tray_api_requests_total\{method="GET",route="\/notifications\/v3\/stream",status="200"/,
      );
      expect(metrics).to.not.match(
        /tray_api_request_duration_seconds_count\{[^}]*route="\/notifications\/v3\/stream",status="200"/,
      );
    });
  });

  describe('POST /notifications/v3/stream-ticket', () => {
    const user = 'u-tic';
    const ticket = async (holder = user) => {
      const issued = await request(tray.instance(0).base)
        .post('/notifications/v3/stream-ticket')
        .set('Authorization', await bearer(holder));
      expect(issued.status).to.equal(201);
      return issued.body.data as { ticket: string; expiresIn: number };
    };

    it('needs a bearer token', async () => {
      const refused = await request(tray.instance(0).base).post('/notifications/v3/stream-ticket');
      expect(refused.status).to.equal(401);
      expectMatchesOpenApi(refused, 'POST', '/notifications/v3/stream-ticket');
    });

    it('refuses a body or query parameters it does not take (400, 415), and takes an empty JSON object', async () => {
      const auth = await bearer(user);
      const post = () =>
        request(tray.instance(0).base).post('/notifications/v3/stream-ticket').set('Authorization', auth);
      for (const [res, status] of [
        [await post().set('Content-Type', 'text/plain').send('ticket'), 415],
        [await post().send({ userId: 'u-other' }), 400],
        [await post().query({ userId: 'u-other' }), 400],
      ] as const) {
        expect(res.status, res.text).to.equal(status);
        expectMatchesOpenApi(res, 'POST', '/notifications/v3/stream-ticket');
      }
      expect((await post().send({})).status).to.equal(201);
    });

    it('answers as its OpenAPI description says', async () => {
      const issued = await request(tray.instance(0).base)
        .post('/notifications/v3/stream-ticket')
        .set('Authorization', await bearer(user));
      expectMatchesOpenApi(issued, 'POST', '/notifications/v3/stream-ticket');
      // A ticket opens this user's stream: no cache may keep it.
      expect(issued.headers['cache-control']).to.equal('private, no-store');
      const refused = await request(tray.instance(0).base).get(`${STREAM}?ticket=${'x'.repeat(43)}`);
      expectMatchesOpenApi(refused, 'GET', STREAM);
      // Every 401 carries its challenge (RFC 9110 §11.6.1), a refused ticket's too.
      expect(refused.status).to.equal(401);
      expect(refused.headers['www-authenticate']).to.equal('Bearer error="invalid_token"');
    });

    it('opens one stream for its user, on any instance, once', async () => {
      const { ticket: value, expiresIn } = await ticket();
      expect(expiresIn).to.equal(1);
      const opened = await openSse(`${tray.instance(1).base}${STREAM}?ticket=${value}`);
      open.push(opened);
      expect(opened.status).to.equal(200);
      await opened.next(named('unread'));
      const again = await openSse(`${tray.instance(0).base}${STREAM}?ticket=${value}`);
      expect(again.status).to.equal(401);
      expect(JSON.parse(await again.body()).message).to.include('ticket');
    });

    it('is not spent by a request refused for its input (400): the same ticket then opens its stream', async () => {
      const { ticket: value } = await ticket();
      const url = `${tray.instance(0).base}${STREAM}?ticket=${value}`;
      for (const [query, headers] of [
        ['&lastEventId=not-an-id!', {}],
        ['&replaces=not-a-stream-id', {}],
        ['', { 'Last-Event-ID': 'not an id' }],
        ['&locale=a&locale=b', {}],
        // A parameter it does not take (here a misspelt lastEventId) is refused, never ignored.
        ['&lastEventid=x', {}],
      ] as const) {
        const refused = await openSse(`${url}${query}`, headers);
        expect(refused.status, query || 'Last-Event-ID').to.equal(400);
        expect(JSON.parse(await refused.body())).to.deep.include({ status: 'error', code: 400001 });
      }
      const opened = await openSse(url);
      open.push(opened);
      expect(opened.status).to.equal(200);
      await opened.next(named('unread'));
    });

    it('is not spent by a HEAD (405, Allow: GET): the same ticket then opens its stream', async () => {
      const { ticket: value } = await ticket();
      const url = `${tray.instance(0).base}${STREAM}?ticket=${value}`;
      const head = await fetch(url, { method: 'HEAD' });
      expect(head.status).to.equal(405);
      expect(head.headers.get('allow')).to.equal('GET');
      const opened = await openSse(url);
      open.push(opened);
      expect(opened.status).to.equal(200);
      await opened.next(named('unread'));
    });

    it('is spent by a request refused once it was redeemed (a banned user: 401)', async () => {
      // A user of its own: the ban stays.
      const banned = 'u-tic-banned';
      const { ticket: value } = await ticket(banned);
      await tray.worker.deliver(banEvent('ban', [banned], minute(30)));
      const auth = await bearer(banned);
      for (let attempt = 0; attempt < 50; attempt += 1) {
        const probe = await request(tray.instance(1).base)
          .get('/notifications/v3')
          .set('Authorization', auth);
        if (probe.status === 401) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const refused = await openSse(`${tray.instance(1).base}${STREAM}?ticket=${value}`);
      expect(refused.status).to.equal(401);
      expect(JSON.parse(await refused.body())).to.deep.include({ code: 401001 });
      const again = await openSse(`${tray.instance(1).base}${STREAM}?ticket=${value}`);
      expect(again.status).to.equal(401);
      expect(JSON.parse(await again.body())).to.deep.include({ code: 401000 });
    });

    it('expires unused', async () => {
      const { ticket: value } = await ticket();
      await new Promise((resolve) => setTimeout(resolve, 1_300));
      const late = await openSse(`${tray.instance(0).base}${STREAM}?ticket=${value}`);
      expect(late.status).to.equal(401);
    });
  });

  describe('the demo page', () => {
    it('is not served unless TRAY_DEMO is on', async () => {
      expect((await request(tray.instance(0).base).get('/demo')).status).to.equal(404);
      expect((await request(tray.instance(0).base).get('/demo/demo.js')).status).to.equal(404);
    });
  });

  describe('shutdown', () => {
    it('closes every stream with a retry hint', async () => {
      const s = await stream(1, 'u-bye');
      await s.next(named('unread'));
      await tray.instance(1).live.hub.close(1_000);
      await s.ended;
      const retry = await s.next(named('retry'));
      expect(retry.retry).to.be.within(1_000, 5_000);
    });

    // A stream still being authorised when shutdown starts opens after the hub closed: left open,
    // it got nothing and held the listener's drain to the shutdown deadline.
    it('ends a stream that opens after the close at once, with a retry hint', async () => {
      const { hub } = tray.instance(1).live;
      await hub.close(1_000);
      const s = await stream(1, 'u-late');
      expect(s.status).to.equal(200);
      const retry = await s.next(named('retry'), { timeoutMs: 3_000 });
      expect(retry.retry).to.be.within(1_000, 5_000);
      await s.ended;
      expect(hub.size).to.equal(0);
    });
  });
});

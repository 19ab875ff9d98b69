import { expect } from 'chai';
import request from 'supertest';
import { unauthorizedCodes } from '../../../client/src/generated/tray-api-types.ts';
import type { TokenRequest } from '../../../client/src/get-token.ts';
import { TrayApiError } from '../../../client/src/tray-api-error.ts';
import { openTrayStream, TrayStreamError, type TrayStreamOptions } from '../../../client/src/stream/index.ts';
import { MAX_EVENT_CHARS } from '../../../client/src/stream/sse-parser.ts';
import { streamEvents } from '../../../tray-service/http/api-schema/stream-schemas.ts';
import { commentEvent, minute } from '../../tray-service/worker/event-builder.ts';
import { waitFor } from '../../support/wait-for.ts';
import { named, openSse, type SseStream } from '../../tray-service/live/support/sse-client.ts';
import { useClientTarget } from '../support/client-target.ts';
import { useScriptedServers } from '../support/scripted-servers.ts';
import { collectStream } from './support/collect-stream.ts';
import {
  eventStreamHead,
  openedEvent,
  scriptedStream,
  sseEvent,
  type ScriptedStream,
} from './support/scripted-stream.ts';

describe('openTrayStream against the tray service', function () {
  this.timeout(30_000);
  const target = useClientTarget();
  const bearer = async (user: string) => `Bearer ${await target.token(user)}`;
  const aborts: AbortController[] = [];
  afterEach(() => {
    for (const controller of aborts.splice(0)) controller.abort();
  });

  /** A stream of `user`'s tray with quick reconnects; the test's own options win. */
  const open = (user: string, options: Partial<TrayStreamOptions> = {}) => {
    const controller = new AbortController();
    aborts.push(controller);
    const stream = collectStream(
      openTrayStream({
        baseUrl: target.baseUrl,
        getToken: () => target.token(user),
        signal: controller.signal,
        reconnect: { initialMs: 200, maxMs: 1_000 },
        ...options,
      }),
    );
    return { stream, controller };
  };

  describe('with a valid token', () => {
    it('yields typed events (unread, record, read, archived, snoozed, cleared), each as the schema declares it', async () => {
      const user = target.user('u-typed');
      const { stream } = open(user);
      expect((await stream.next('unread')).data).to.deep.equal({ totalUnreadCount: 0, totalUnseenCount: 0 });
      await target.deliver(commentEvent({ postId: 'p-ty', postOwner: user, createdAt: minute(1) }));
      const record = await stream.next('record');
      expect(record.data.v_tarid_uid).to.equal(`comment_p-ty_${user}`);
      expect(record.data.description).to.equal('Cid commented on your post in Hiking Club');
      await stream.next('unread', { match: (event) => event.data.totalUnreadCount === 1 });
      await request(target.baseUrl)
        .post('/notifications/v2/read')
        .set('Authorization', await bearer(user))
        .send({ verb: 'comment', targetId: 'p-ty' })
        .expect(200);
      const id = `comment_p-ty_${user}`;
      expect((await stream.next('read')).data.ids).to.deep.equal([id]);
      const post = async (path: string, body: object) =>
        request(target.baseUrl)
          .post(`/notifications/v3/records/${path}`)
          .set('Authorization', await bearer(user))
          .send(body)
          .expect(200);
      await post('archive', { ids: [id] });
      expect((await stream.next('archived')).data.ids).to.deep.equal([id]);
      const until = Date.now() + 60_000;
      await post('snooze', { ids: [id], until });
      expect((await stream.next('snoozed')).data).to.deep.equal({ ids: [id], until });
      const from = stream.events.length;
      await post('unsnooze', { ids: [id] });
      const back = await stream.next('record', { from });
      expect(back.data).to.include({ v_tarid_uid: id, snoozedUntil: null, archivedAt: null });
      await request(target.baseUrl)
        .delete('/notifications/v3/delete-all')
        .set('Authorization', await bearer(user))
        .expect(200);
      await stream.next('cleared');
      // Every event's data is exactly what the service's schema for that event accepts, and every
      // event carries the id a reconnect resumes from.
      for (const event of stream.events) {
        expect(() => streamEvents[event.event].parse(event.data), event.event).to.not.throw();
        expect(event.id).to.be.a('string').and.not.equal('');
      }
    });
  });

  describe('when the token expires mid-stream', () => {
    it('asks getToken again, resumes after the "expired" event, and misses nothing', async () => {
      const user = target.user('u-expiry');
      let tokens = 0;
      const asked: { refused?: string }[] = [];
      const given: string[] = [];
      let delivered: Promise<unknown> | undefined;
      const { stream } = open(user, {
        getToken: async (context) => {
          tokens += 1;
          asked.push(context);
          const token = await target.token(user, 3);
          given.push(token);
          return token;
        },
        // A comment queued while the client waits to reconnect: only the resumed stream brings it.
        reconnect: { initialMs: 1_500, maxMs: 1_500 },
        onState: (state) => {
          if (state === 'waiting' && !delivered)
            delivered = target.seed(user, [{ targetId: 'p-gap', at: Date.parse(minute(2)) }]);
        },
      });
      await stream.next('unread');
      await target.deliver(commentEvent({ postId: 'p-before', postOwner: user, createdAt: minute(1) }));
      await stream.next('record', { match: (event) => event.data.targetId === 'p-before' });
      await stream.next('record', { match: (event) => event.data.targetId === 'p-gap', timeoutMs: 10_000 });
      expect(tokens).to.equal(2);
      // The service said the token expired: a cache with a clock behind the service's would give
      // it back, and its ticket's 401 would count against the address, unless told it is refused.
      expect(asked).to.deep.equal([{}, { refused: given[0] }]);
      await delivered;
      await target.deliver(commentEvent({ postId: 'p-after', postOwner: user, createdAt: minute(3) }));
      await stream.next('record', { match: (event) => event.data.targetId === 'p-after' });
      // Each record once: the resumed stream did not repeat what the first one delivered.
      expect(stream.records().map((record) => record.targetId)).to.deep.equal([
        'p-before',
        'p-gap',
        'p-after',
      ]);
    });
  });

  describe('when a token is refused (401, code 401000)', () => {
    it('asks getToken for another and opens the stream with it', async () => {
      const user = target.user('u-refused');
      let tokens = 0;
      const { stream } = open(user, {
        getToken: () => {
          tokens += 1;
          return tokens === 1 ? 'not-a-jwt' : target.token(user);
        },
      });
      expect((await stream.next('unread')).data.totalUnreadCount).to.equal(0);
      expect(tokens).to.equal(2);
    });

    // A token the service refuses before the app's cache thinks it expired (JWT_MAX_TOKEN_AGE, or
    // the service's clock ahead of the app's): here one past its exp, which the cache still hands out.
    it('tells getToken which token was refused, so a cache can give another', async () => {
      const user = target.user('u-refused-told');
      const stale = await target.token(user, -120);
      const asked: TokenRequest[] = [];
      const { stream } = open(user, {
        getToken: (request) => {
          asked.push(request);
          return request.refused === stale ? target.token(user) : stale;
        },
      });
      expect((await stream.next('unread')).data.totalUnreadCount).to.equal(0);
      expect(asked).to.deep.equal([{}, { refused: stale }]);
    });

    it('waits and asks again when getToken gives back the very token refused, and opens once it gives another', async () => {
      const user = target.user('u-refused-cached');
      const stale = await target.token(user, -120);
      let tokens = 0;
      const states: string[] = [];
      const { stream } = open(user, {
        getToken: () => (++tokens <= 3 ? stale : target.token(user)),
        onState: (state) => states.push(state),
      });
      expect((await stream.next('unread')).data.totalUnreadCount).to.equal(0);
      expect(tokens).to.equal(4);
      expect(states.filter((state) => state === 'waiting')).to.have.length(2);
    });

    // A token endpoint that gave back the refused token from its cache, then went down itself: a
    // getToken failure after a wait is waited out, as after any other wait.
    it('waits out a getToken that fails after it gave back the refused token, and opens once it answers', async () => {
      const user = target.user('u-refused-then-down');
      const stale = await target.token(user, -120);
      let tokens = 0;
      const { stream } = open(user, {
        getToken: () => {
          tokens += 1;
          if (tokens <= 2) return stale;
          if (tokens === 3) throw new Error('token endpoint down');
          return target.token(user);
        },
      });
      expect((await stream.next('unread')).data.totalUnreadCount).to.equal(0);
      expect(tokens).to.equal(4);
    });

    it('ends with the 401 once getToken has given back the refused token 4 times after waits', async () => {
      const user = target.user('u-refused-always');
      const stale = await target.token(user, -120);
      let tokens = 0;
      const { stream } = open(user, {
        getToken: () => {
          tokens += 1;
          return stale;
        },
      });
      const error = await stream.ended;
      expect(error).to.be.instanceOf(TrayApiError);
      expect(error).to.include({ status: 401, code: unauthorizedCodes.invalidToken });
      expect(tokens).to.equal(6);
    });
  });

  // The stream's own 401 refuses the ticket (unknown, used or past its 30 s), not the token that
  // bought it a moment before: a proxy that replays the GET, or one slow past the ticket's life.
  describe('when a ticket is refused (the stream request answers 401)', () => {
    it('waits and buys another, never telling getToken its token was refused, also twice in a row', async () => {
      const user = target.user('u-ticket-refused');
      const asked: TokenRequest[] = [];
      let spoiled = 0;
      const spoilTwice: typeof fetch = (input, init) => {
        const url = String(input);
        if (url.includes('/notifications/v3/stream?') && spoiled < 2) {
          spoiled += 1;
          return fetch(url.replace(/ticket=[^&]+/, 'ticket=used-or-unknown'), init);
        }
        return fetch(input, init);
      };
      const { stream } = open(user, {
        fetch: spoilTwice,
        getToken: (request) => {
          asked.push(request);
          return target.token(user);
        },
      });
      expect((await stream.next('unread')).data.totalUnreadCount).to.equal(0);
      expect(spoiled).to.equal(2);
      // Asked after each wait, as after any wait (a token may expire during one), never as refused.
      expect(asked).to.deep.equal([{}, {}, {}]);
    });
  });

  describe('when the user is banned (401, code 401001)', () => {
    it('ends the iteration with the ban’s TrayApiError at once, without asking getToken after it', async () => {
      const user = target.user('u-banned');
      let tokens = 0;
      const { stream } = open(user, {
        getToken: () => {
          tokens += 1;
          return target.token(user);
        },
      });
      await stream.next('unread');
      await target.ban(user);
      const error = await stream.ended;
      expect(error).to.be.instanceOf(TrayApiError);
      expect(error).to.include({
        status: 401,
        code: unauthorizedCodes.banned,
        message: 'user is globally banned',
      });
      // The first token, and the one asked for after the wait to reconnect (the stream ended at the
      // ban); none after the ban's refusal: another would be refused too.
      expect(tokens).to.equal(2);
    });
  });

  describe('when another stream of the user takes its place (STREAMS_PER_USER)', () => {
    it('yields `replaced` and ends the iteration, without reconnecting in a fight with the newer streams', async () => {
      const user = target.user('u-replaced');
      const { stream } = open(user);
      await stream.next('unread');
      // Streams of the same user opened elsewhere (other tabs, devices) until this one, the oldest,
      // gives its place, whatever the service's limit.
      const others: SseStream[] = [];
      for (let opened = 0; opened < 100 && stream.events.every((event) => event.event !== 'replaced');) {
        others.push(
          await openSse(`${target.baseUrl}/notifications/v3/stream`, { Authorization: await bearer(user) }),
        );
        await others.at(-1)?.next(named('unread'));
        opened += 1;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      try {
        const replaced = await stream.next('replaced');
        expect(replaced.data).to.deep.equal({ reason: 'stream-limit', reconnect: false });
        expect(replaced.id).to.be.a('string').and.not.equal('');
        expect(await stream.ended).to.equal(undefined);
        // Reconnects are 200 ms apart here: one would have replaced the oldest of the others.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        for (const other of others) expect(other.events.filter(named('replaced'))).to.deep.equal([]);
      } finally {
        for (const other of others) other.close();
      }
    });
  });

  describe('when its signal aborts', () => {
    // Only this process's own service shows its streams; a running stack's are not visible here,
    // so against one the test claims, and checks, the client's side alone.
    const { openStreams } = target;
    it(
      openStreams
        ? 'ends cleanly while reading, and the service closes the stream'
        : 'ends cleanly while reading (the service’s side is checked against the suite’s own service)',
      async () => {
        const { stream, controller } = open(target.user('u-abort'));
        await stream.next('unread');
        // The earlier tests' streams close as the service notices their clients went.
        if (openStreams) await waitFor(() => openStreams() === 1, 5_000, 'only this stream open');
        controller.abort();
        expect(await stream.ended).to.equal(undefined);
        if (openStreams) await waitFor(() => openStreams() === 0, 5_000, 'the service to close the stream');
      },
    );

    it('ends cleanly while it waits to reconnect', async () => {
      let refusals = 0;
      const { stream, controller } = open(target.user('u-abort-wait'), {
        // Nothing listens there: every attempt fails and the stream waits to try again.
        baseUrl: 'http://127.0.0.1:9',
        reconnect: { initialMs: 60_000, maxMs: 60_000 },
        onState: (state) => {
          if (state === 'waiting') refusals += 1;
        },
      });
      await waitFor(() => refusals === 1, 5_000, 'the first wait');
      const started = Date.now();
      controller.abort();
      expect(await stream.ended).to.equal(undefined);
      expect(Date.now() - started).to.be.below(1_000);
    });

    it('yields nothing when aborted before it starts', async () => {
      const controller = new AbortController();
      controller.abort();
      let tokens = 0;
      const stream = collectStream(
        openTrayStream({
          baseUrl: target.baseUrl,
          getToken: () => {
            tokens += 1;
            return target.token('u-never');
          },
          signal: controller.signal,
        }),
      );
      expect(await stream.ended).to.equal(undefined);
      expect(stream.events).to.deep.equal([]);
      expect(tokens).to.equal(0);
    });
  });
});

// What the tray service does not send on its own but a network or a proxy can make of it, from a
// real HTTP server the test scripts.
describe('openTrayStream against a scripted event stream', function () {
  this.timeout(20_000);
  const aborts: AbortController[] = [];
  // Before the servers close: a stream still running would reconnect to a closed port meanwhile.
  afterEach(() => {
    for (const controller of aborts.splice(0)) controller.abort();
  });
  const servers = useScriptedServers();

  /** A stream from `script`'s server with quick reconnects; the test's own options win. */
  const open = async (script: ScriptedStream, options: Partial<TrayStreamOptions> = {}) => {
    const controller = new AbortController();
    aborts.push(controller);
    const stream = collectStream(
      openTrayStream({
        baseUrl: await servers.serve(script.handler),
        getToken: () => 'a-token',
        signal: controller.signal,
        reconnect: { initialMs: 20, maxMs: 20 },
        ...options,
      }),
    );
    return { stream, controller };
  };
  const unread = (count: number) => ({ totalUnreadCount: count, totalUnseenCount: count });

  describe('when the service asks for a wait longer than reconnect.maxMs', () => {
    const maxMs = 300;
    /** The gaps between the first `count` times `at` gives, once there are that many. */
    const gapsOf = async (at: () => number[], count: number) => {
      await waitFor(() => at().length >= count, 5_000, `${count} connection attempts`);
      const times = at().slice(0, count);
      return times.slice(1).map((time, index) => time - times[index]!);
    };

    // Up to a fifth below maxMs at random, so clients told the same wait do not return together.
    it('waits about maxMs after a 429 with a Retry-After of 30 days: not 30 days, and not at once', async () => {
      const script = scriptedStream(
        () => expect.fail('no ticket was sold'),
        (res) => {
          res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': String(30 * 24 * 3_600) });
          res.end(JSON.stringify({ status: 'error', code: 400311, message: 'RateLimit Exceed' }));
        },
      );
      await open(script, { reconnect: { initialMs: 50, maxMs } });
      for (const gap of await gapsOf(() => script.tickets, 3))
        expect(gap).to.be.within(maxMs * 0.8 - 5, maxMs + 1_000);
    });

    it('waits about maxMs after a stream that ends with a retry: of 35 days', async () => {
      const script = scriptedStream((res) => {
        res.writeHead(200, eventStreamHead);
        res.end(`${sseEvent('unread', '1', unread(0))}retry: 3000000000\n\n`);
      });
      await open(script, { reconnect: { initialMs: 50, maxMs } });
      const times = () => script.requests.map((request) => request.at);
      for (const gap of await gapsOf(times, 3)) expect(gap).to.be.within(maxMs * 0.8 - 5, maxMs + 1_000);
    });
  });

  // An EventSource keeps the last `retry:` for its whole life. The client kept it for one
  // connection: the service's shutdown spreads its clients with it, and a reconnect that met the
  // service still down fell back to the short backoff, bunching the clients up again.
  describe("when a reconnect after the service's retry: meets the service still down", () => {
    it('keeps waiting at least that long', async () => {
      const script = scriptedStream((res, request) => {
        if (request.index === 0) {
          res.writeHead(200, eventStreamHead);
          res.end(`${sseEvent('unread', '1', unread(0))}retry: 600\n\n`);
          return;
        }
        res.writeHead(503, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ status: 'error', code: 503000, message: 'storage unavailable' }));
      });
      await open(script, { reconnect: { initialMs: 50, maxMs: 5_000 } });
      await waitFor(() => script.requests.length >= 4, 10_000, 'four stream requests');
      const times = script.requests.slice(0, 4).map((request) => request.at);
      const gaps = times.slice(1).map((time, index) => time - times[index]!);
      for (const gap of gaps) expect(gap, JSON.stringify(gaps)).to.be.at.least(600 - 5);
    });
  });

  // The hint is for the outage it was sent in: kept for good, one rolling deploy made every later
  // reconnect (each token's expiry) wait that long, a live gap of seconds each time.
  describe("when a stream after the service's retry: is served", () => {
    it('forgets it once a stream is served again and ends without one', async () => {
      const script = scriptedStream((res, request) => {
        res.writeHead(200, eventStreamHead);
        if (request.index === 0) res.end(`${sseEvent('unread', '1', unread(0))}retry: 600\n\n`);
        else
          res.end(
            `${sseEvent('unread', '2', unread(0))}${sseEvent('expired', '3', { reason: 'token-expired', reconnect: true })}`,
          );
      });
      await open(script, { reconnect: { initialMs: 50, maxMs: 5_000 } });
      await waitFor(() => script.requests.length >= 3, 10_000, 'three stream requests');
      const [first, second, third] = script.requests.map((request) => request.at);
      expect(second! - first!, 'after the hint').to.be.at.least(600 - 5);
      expect(third! - second!, 'after a served stream that named no wait').to.be.below(600 - 5);
    });
  });

  describe('when the stream request is refused with a 4xx', () => {
    const answering = (status: number) =>
      scriptedStream((res) => {
        res.writeHead(status, { 'Content-Type': 'text/html' });
        res.end('<html>a proxy’s page</html>');
      });

    it('tries again after one that may pass (408, 409, 425)', async () => {
      for (const status of [408, 409, 425]) {
        const script = answering(status);
        const { stream } = await open(script);
        await waitFor(() => script.requests.length >= 3, 5_000, `three stream requests after ${status}s`);
        expect(await Promise.race([stream.ended, 'still going']), String(status)).to.equal('still going');
      }
    });

    // A proxy's 405 or 501 (a method it does not pass on), 413 or 431 came back the same with every
    // backoff step, for as long as the page stayed open.
    it('ends the iteration with its TrayApiError after one that trying again cannot change (400, 403, 404, 405, 410, 411, 413, 414, 415, 422, 431, 501, 505)', async () => {
      for (const status of [400, 403, 404, 405, 410, 411, 413, 414, 415, 422, 431, 501, 505]) {
        const script = answering(status);
        const { stream } = await open(script);
        expect(await stream.ended, String(status))
          .to.be.instanceOf(TrayApiError)
          .and.include({ status });
        expect(script.requests, String(status)).to.have.lengthOf(1);
      }
    });

    // Followed, the ticket's POST arrived as a GET elsewhere, and the stream was tried for ever.
    it('ends the iteration with a TrayApiError naming where a redirect pointed, following none', async () => {
      const script = scriptedStream(
        (res) => {
          res.writeHead(302, { Location: 'https://tray.example.org/notifications/v3/stream' });
          res.end();
        },
        (res) => {
          res.writeHead(301, { Location: 'https://tray.example.org/notifications/v3/stream-ticket' });
          res.end();
        },
      );
      const { stream } = await open(script);
      const ended = await stream.ended;
      expect(ended).to.be.instanceOf(TrayApiError).and.include({ status: 301, code: 0 });
      expect((ended as TrayApiError).message).to.include('redirect to https://tray.example.org/');
      expect(script.tickets).to.have.lengthOf(1);
      expect(script.requests).to.have.lengthOf(0);
      // The ticket sold, the stream's own request moved.
      const streamMoved = scriptedStream((res) => {
        res.writeHead(302, { Location: 'https://tray.example.org/notifications/v3/stream' });
        res.end();
      });
      const second = await open(streamMoved);
      expect(await second.stream.ended)
        .to.be.instanceOf(TrayApiError)
        .and.include({ status: 302, code: 0 });
      expect(streamMoved.requests).to.have.lengthOf(1);
    });
  });

  describe('when a token is refused after a wait (it expired while the service was unavailable)', () => {
    it('asks getToken again after each wait, and does not take the refusal for a final one', async () => {
      // token-1 is stale (the app kept it across a sleep); then the ticket store is down (503) for
      // two attempts, longer than a token lives: a token given before the outage is refused after it.
      const presented: string[] = [];
      const script = scriptedStream(
        (res) => {
          res.writeHead(200, eventStreamHead);
          res.write(sseEvent('unread', '1', unread(0)));
        },
        (res, req) => {
          const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
          const index = presented.push(token) - 1;
          const [status, body] =
            index === 1 || index === 2
              ? [503, { status: 'error', code: 503000, message: 'storage unavailable' }]
              : token === 'token-1' || token === 'token-2'
                ? [401, { status: 'error', code: 401000, message: 'invalid token' }]
                : [201, { data: { ticket: 'a-ticket', expiresIn: 30 } }];
          res.writeHead(status, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify(body));
        },
      );
      const asked: { refused?: string }[] = [];
      const { stream } = await open(script, {
        getToken: (request) => `token-${asked.push(request)}`,
      });
      expect((await stream.next('unread')).data).to.deep.equal(unread(0));
      // A new token after the refusal, and after each wait: none is presented after a wait.
      expect(presented).to.deep.equal(['token-1', 'token-2', 'token-3', 'token-4']);
      // Told of token-1's refusal once: token-2 replaced it, and was never refused itself.
      expect(asked).to.deep.equal([{}, { refused: 'token-1' }, {}, {}]);
    });
  });

  describe('when the service refuses for now (503 with Retry-After)', () => {
    it("tells onError of each refusal it waits out: the service's status and code, and the wait named", async () => {
      const script = scriptedStream(
        () => expect.fail('no ticket was sold'),
        (res) => {
          res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1' });
          res.end(JSON.stringify({ status: 'error', code: 503000, message: 'storage unavailable' }));
        },
      );
      const told: { error: unknown; retryInMs: number }[] = [];
      await open(script, {
        reconnect: { initialMs: 200, maxMs: 5_000 },
        onError: (error, retryInMs) => told.push({ error, retryInMs }),
      });
      await waitFor(() => told.length >= 2, 5_000, 'two refusals told');
      for (const { error, retryInMs } of told) {
        expect(error).to.be.instanceOf(TrayApiError).and.include({ status: 503, code: 503000 });
        // Retry-After: 1, up to a fifth longer.
        expect(retryInMs).to.be.within(1_000, 1_200);
      }
    });
  });

  describe("when the service's clock is not the client's", () => {
    for (const [name, offsetMs] of [
      ['an hour ahead', 3_600_000],
      ['an hour behind', -3_600_000],
    ] as const) {
      it(`${name}: measures a Retry-After date against the response's Date, waiting the second it names`, async () => {
        const script = scriptedStream(
          () => expect.fail('no ticket was sold'),
          (res) => {
            // Whole seconds, as servers write them: the date named is one second after the Date sent.
            const serverNow = Math.floor((Date.now() + offsetMs) / 1_000) * 1_000;
            res.writeHead(503, {
              'Content-Type': 'application/json',
              Date: new Date(serverNow).toUTCString(),
              'Retry-After': new Date(serverNow + 1_000).toUTCString(),
            });
            res.end(JSON.stringify({ status: 'error', code: 503000, message: 'storage unavailable' }));
          },
        );
        const told: number[] = [];
        await open(script, {
          reconnect: { initialMs: 200, maxMs: 5_000 },
          onError: (_error, retryInMs) => told.push(retryInMs),
        });
        await waitFor(() => told.length >= 1, 5_000, 'a refusal told');
        // One second, up to a fifth longer: not the backoff's 200 ms, nor the 5 s cap on an hour.
        expect(told[0]).to.be.within(1_000, 1_200);
      });
    }
  });

  describe('when getToken fails after a wait (its own endpoint is down in the same outage)', () => {
    it('waits it out with the backoff, telling onError, and opens once getToken answers; a failure of the first token ends it', async () => {
      let streams = 0;
      const script = scriptedStream((res) => {
        res.writeHead(200, eventStreamHead);
        res.write(sseEvent('unread', String((streams += 1)), unread(streams)));
        // Served (an event past its `unread`), then ended: a restart, which onError is not told of.
        if (streams === 1) res.end(sseEvent('read', '1r', { ids: ['r-1'] }));
      });
      let asked = 0;
      const told: { message: string; retryInMs: number }[] = [];
      const { stream } = await open(script, {
        getToken: () => {
          asked += 1;
          if (asked === 2 || asked === 3) return Promise.reject(new TypeError(`fetch failed ${asked}`));
          return `token-${asked}`;
        },
        onError: (error, retryInMs) => told.push({ message: (error as Error).message, retryInMs }),
      });
      expect((await stream.next('unread')).data).to.deep.equal(unread(1));
      await stream.next('unread', { match: (event) => event.data.totalUnreadCount === 2 });
      expect(asked).to.equal(4);
      // The app learns why the stream waits (a sign-in that has ended would fail the same way for
      // ever): each failure, with the wait before the next try, which grows.
      expect(told.map((entry) => entry.message)).to.deep.equal(['fetch failed 2', 'fetch failed 3']);
      for (const { retryInMs } of told) expect(retryInMs).to.be.within(10, 20);
      expect(stream.events.map((event) => event.event)).to.deep.equal(['unread', 'read', 'unread']);

      const failing = scriptedStream(() => expect.fail('no stream was opened'));
      const first = await open(failing, { getToken: () => Promise.reject(new Error('signed out')) });
      expect(((await first.stream.ended) as Error).message).to.equal('signed out');
      expect(failing.tickets).to.deep.equal([]);
    });

    // After the wait, the app's cache hands out a token that expired meanwhile; the service refuses
    // it, and the token asked for next fails, the app's endpoint not back yet: still the outage the
    // stream waited out, not a sign-in that ended, until a stream is open again.
    it('waits out a failure of the token asked for after a 401 that followed a wait', async () => {
      let streams = 0;
      const script = scriptedStream(
        (res) => {
          res.writeHead(200, eventStreamHead);
          res.write(sseEvent('unread', String((streams += 1)), unread(streams)));
          // Served, then ended (a restart): not a failure onError is told of.
          if (streams === 1) res.end(sseEvent('read', '1r', { ids: ['r-1'] }));
        },
        (res, req) => {
          const expired = req.headers.authorization === 'Bearer token-2';
          res.writeHead(expired ? 401 : 201, { 'Content-Type': 'application/json' });
          res.end(
            JSON.stringify(
              expired
                ? { status: 'error', code: 401000, message: 'invalid token' }
                : { data: { ticket: 'a-ticket', expiresIn: 30 } },
            ),
          );
        },
      );
      const asked: { refused?: string }[] = [];
      const told: string[] = [];
      const { stream } = await open(script, {
        getToken: (request) => {
          const count = asked.push(request);
          return count === 3 ? Promise.reject(new TypeError('fetch failed')) : `token-${count}`;
        },
        onError: (error) => told.push((error as Error).message),
      });
      await stream.next('unread', { match: (event) => event.data.totalUnreadCount === 2 });
      // Asked again with the refused token named: the cache may still hand it out.
      expect(asked).to.deep.equal([{}, {}, { refused: 'token-2' }, { refused: 'token-2' }]);
      expect(told).to.deep.equal(['fetch failed']);
    });
  });

  describe('when a request of a connection gets no answer (a server or proxy that hangs)', () => {
    const idleTimeoutMs = 500;
    /**
     * When the client sent each request whose path ends with `path`. Timed here, not where the
     * server saw them: a busy machine can delay the first request's connection by tens of
     * milliseconds more than the next one's, which shortens the gap the server sees.
     */
    const timedFetch = (path: string) => {
      const sent: number[] = [];
      const send: typeof fetch = (input, init) => {
        const url = input instanceof Request ? input.url : String(input);
        if (new URL(url).pathname.endsWith(path)) sent.push(performance.now());
        return fetch(input, init);
      };
      return { sent, fetch: send };
    };

    it('gives up a stream request without response headers after idleTimeoutMs, and tries again', async () => {
      const script = scriptedStream(() => undefined);
      const states: string[] = [];
      const streams = timedFetch('/stream');
      await open(script, { idleTimeoutMs, onState: (state) => states.push(state), fetch: streams.fetch });
      await waitFor(() => script.requests.length >= 2, 5_000, 'a second stream request');
      expect(states.slice(0, 3)).to.deep.equal(['connecting', 'waiting', 'connecting']);
      // Given up after idleTimeoutMs itself: then a 20 ms wait, a new ticket and the next stream.
      expect(streams.sent[1]! - streams.sent[0]!, 'from one stream request to the next').to.be.within(
        idleTimeoutMs - 1,
        idleTimeoutMs + 2_000,
      );
    });

    it('gives up a ticket request without an answer after idleTimeoutMs, and tries again', async () => {
      const script = scriptedStream(
        () => expect.fail('no ticket was sold'),
        () => undefined,
      );
      const tickets = timedFetch('/stream-ticket');
      await open(script, { idleTimeoutMs, fetch: tickets.fetch });
      await waitFor(() => script.tickets.length >= 2, 5_000, 'a second ticket request');
      expect(tickets.sent[1]! - tickets.sent[0]!, 'from one ticket request to the next').to.be.within(
        idleTimeoutMs - 1,
        idleTimeoutMs + 2_000,
      );
    });

    it('does not cut a stream that answered and keeps writing, however long it stays open', async () => {
      const script = scriptedStream((res) => {
        res.writeHead(200, eventStreamHead);
        res.write(sseEvent('unread', '1', unread(0)));
        const beat = setInterval(() => res.write(': hb\n\n'), 50);
        res.on('close', () => clearInterval(beat));
      });
      // Three times the describe's timeout: heartbeats every 50 ms in the same process as the
      // client, where one stall of the event loop longer than the timeout would fire it first.
      const { stream } = await open(script, { idleTimeoutMs: idleTimeoutMs * 3 });
      await stream.next('unread');
      await new Promise((resolve) => setTimeout(resolve, idleTimeoutMs * 3 * 3));
      expect(script.requests).to.have.lengthOf(1);
    });
  });

  describe('when the service names a wait of nothing', () => {
    /** How many requests of `count`'s reach the server in 2 s of a stream with a 200 ms backoff. */
    const requestsIn2s = async (script: ScriptedStream, count: () => number) => {
      await open(script, { reconnect: { initialMs: 200, maxMs: 5_000 } });
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      return count();
    };
    const refusing = (status: number, retryAfter: string) =>
      scriptedStream(
        () => expect.fail('no ticket was sold'),
        (res) => {
          res.writeHead(status, { 'Content-Type': 'application/json', 'Retry-After': retryAfter });
          res.end(JSON.stringify({ status: 'error', code: status * 1000, message: 'wait' }));
        },
      );

    // The backoff's waits are 100 ms at the least, then 200, 400, 800: about five attempts in 2 s.
    it('backs off as without one after a 503 with Retry-After: 0', async () => {
      const script = refusing(503, '0');
      expect(await requestsIn2s(script, () => script.tickets.length)).to.be.below(20);
    });

    it('backs off as without one after a 429 with a Retry-After date in the past', async () => {
      const script = refusing(429, 'Thu, 01 Jan 1970 00:00:00 GMT');
      expect(await requestsIn2s(script, () => script.tickets.length)).to.be.below(20);
    });

    it('backs off as without one after a stream that ends with retry: 0', async () => {
      const script = scriptedStream((res) => {
        res.writeHead(200, eventStreamHead);
        res.end('retry: 0\n\n');
      });
      expect(await requestsIn2s(script, () => script.requests.length)).to.be.below(20);
    });
  });

  describe('when connections come to nothing', () => {
    const reconnect = { initialMs: 100, maxMs: 10_000 };
    /** The gaps between the first `count` stream requests, once there are that many. */
    const gaps = async (script: ScriptedStream, count: number) => {
      await waitFor(() => script.requests.length >= count, 10_000, `${count} stream requests`);
      const times = script.requests.slice(0, count).map((request) => request.at);
      return times.slice(1).map((time, index) => time - times[index]!);
    };
    /** The least gap `step` may be: half of a step doubling from initialMs (a timer is never early). */
    const least = (step: number) => (reconnect.initialMs * 2 ** step) / 2;

    it('backs off, doubling, from a 200 that is not an event stream (a proxy’s maintenance page)', async () => {
      const script = scriptedStream((res) => {
        res.writeHead(200, { 'Content-Type': 'text/html' });
        res.end('<html>Down for maintenance</html>');
      });
      const states: string[] = [];
      await open(script, { reconnect, onState: (state) => states.push(state) });
      const found = await gaps(script, 5);
      found.forEach((gap, step) => expect(gap, `gap ${step}`).to.be.at.least(least(step)));
      expect(states).to.not.include('open');
    });

    it('backs off, doubling, from event streams that end at once, and starts again after one delivered an event past its opening', async () => {
      const script = scriptedStream((res, { index }) => {
        res.writeHead(200, eventStreamHead);
        res.end(index === 4 ? sseEvent('unread', '1', unread(0)) + sseEvent('unread', '2', unread(1)) : '');
      });
      const { stream } = await open(script, { reconnect });
      const found = await gaps(script, 6);
      found.slice(0, 4).forEach((gap, step) => expect(gap, `gap ${step}`).to.be.at.least(least(step)));
      // After the stream that delivered an event past its opening `unread`: the first step again (at
      // most initialMs), where the backoff's next step would have been least(5), 1.6 s, at the least.
      expect(found[4], 'the gap after an event').to.be.below(reconnect.initialMs * 4);
      expect(stream.events.map((event) => event.id)).to.deep.equal(['1', '2']);
    });

    // A service whose catch-up read fails ends each stream right after the `unread` it opens with.
    it('backs off, doubling, from streams that end right after their opening `unread` (and `reset`)', async () => {
      const script = scriptedStream((res, { index }) => {
        res.writeHead(200, eventStreamHead);
        const reset = index % 2 === 0 ? sseEvent('reset', `r${index}`, {}) : '';
        res.end(reset + sseEvent('unread', `u${index}`, unread(index)));
      });
      await open(script, { reconnect });
      const found = await gaps(script, 6);
      found.forEach((gap, step) => expect(gap, `gap ${step}`).to.be.at.least(least(step)));
    });

    it('starts again after a stream that delivered only its `unread` but stayed open reconnect.maxMs', async () => {
      const quick = { initialMs: 100, maxMs: 2_000 };
      let endedAt = 0;
      const script = scriptedStream((res, { index }) => {
        res.writeHead(200, eventStreamHead);
        if (index !== 4) return void res.end('');
        res.write(sseEvent('unread', 'u', unread(0)));
        // A second past maxMs: the client times the stream from when it read the answer's head,
        // which a loaded machine may do well after this handler ran.
        setTimeout(() => {
          endedAt = Date.now();
          res.end();
        }, quick.maxMs + 1_000);
      });
      await open(script, { reconnect: quick });
      await waitFor(() => script.requests.length >= 6, 15_000, 'six stream requests');
      // Started again: the first step, 50-100 ms. Four failed attempts before it: the backoff's
      // next step would wait 800-1,600 ms. The bound is that least step, which leaves room for a
      // loaded machine's late timers (a gap of 296 ms was seen in CI against a bound of 200).
      expect(script.requests[5]!.at - endedAt, 'the gap after the open stream').to.be.below(800);
    });
  });

  describe('when the stream ends with `replaced`', () => {
    it('yields it and ends the iteration, whatever `retry:` follows, and asks for no new ticket', async () => {
      const script = scriptedStream((res) => {
        res.writeHead(200, eventStreamHead);
        res.write(sseEvent('unread', '1', unread(0)));
        res.end(`${sseEvent('replaced', '2', { reason: 'stream-limit', reconnect: false })}retry: 30000\n\n`);
      });
      const { stream } = await open(script);
      expect(await stream.ended).to.equal(undefined);
      expect(stream.events.map((event) => `${event.event}#${event.id}`)).to.deep.equal([
        'unread#1',
        'replaced#2',
      ]);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(script.tickets).to.have.lengthOf(1);
    });

    // Resumed from an id older than a day, the service leaves the ids off until its `reset`; a
    // newer stream taking the place before that made `replaced` the app resumes from id-less.
    it('gives it the resume point when it comes without an id, so resuming from it misses nothing', async () => {
      const script = scriptedStream((res) => {
        res.writeHead(200, eventStreamHead);
        res.end(`event: replaced\ndata: ${JSON.stringify({ reason: 'stream-limit', reconnect: false })}\n\n`);
      });
      const { stream } = await open(script, { lastEventId: 'an-old-id' });
      expect(await stream.ended).to.equal(undefined);
      expect(stream.events.map((event) => `${event.event}#${event.id}`)).to.deep.equal([
        'replaced#an-old-id',
      ]);
    });
  });

  describe('when the service tells the stream its id (`opened`)', () => {
    it('names that stream in `replaces` when it reconnects, and does not yield the event', async () => {
      const streamIds = [
        '0000000aa-00000000-0000-4000-8000-000000000001',
        '0000000ab-00000000-0000-4000-8000-000000000002',
      ];
      const script = scriptedStream((res, { index }) => {
        res.writeHead(200, eventStreamHead);
        if (index < 2) res.write(sseEvent('opened', `${index}.0`, { streamId: streamIds[index] }));
        // The first two end at once (a drop); the third stays.
        if (index < 2) res.end(sseEvent('unread', `${index}.1`, unread(index)));
        else res.write(sseEvent('unread', `${index}.1`, unread(index)));
      });
      const { stream } = await open(script);
      await stream.next('unread', { match: (event) => event.id === '2.1' });
      expect(script.requests.map((request) => request.replaces)).to.deep.equal([null, ...streamIds]);
      expect(stream.events.map((event) => event.event)).to.deep.equal(['unread', 'unread', 'unread']);
    });
  });

  describe('when the iteration ends', () => {
    const replacing = () =>
      scriptedStream((res) => {
        res.writeHead(200, eventStreamHead);
        res.write(sseEvent('unread', '1', unread(0)));
        res.end(sseEvent('replaced', '2', { reason: 'stream-limit', reconnect: false }));
      });

    it('reports `closed` as its last state after `replaced`, not `open`', async () => {
      const states: string[] = [];
      const { stream } = await open(replacing(), { onState: (state) => states.push(state) });
      expect(await stream.ended).to.equal(undefined);
      expect(states).to.deep.equal(['connecting', 'open', 'closed']);
    });

    it('reports `closed` as its last state after a refusal for good, and after an abort', async () => {
      const refusing = scriptedStream((res) => {
        res.writeHead(403, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ status: 'error', code: 403000, message: 'forbidden' }));
      });
      const refused: string[] = [];
      const first = await open(refusing, { onState: (state) => refused.push(state) });
      expect(await first.stream.ended).to.be.instanceOf(TrayApiError);
      expect(refused).to.deep.equal(['connecting', 'closed']);

      const aborted: string[] = [];
      const script = scriptedStream((res) => {
        res.writeHead(200, eventStreamHead);
        res.write(sseEvent('unread', '1', unread(0)));
      });
      const second = await open(script, { onState: (state) => aborted.push(state) });
      await second.stream.next('unread');
      second.controller.abort();
      expect(await second.stream.ended).to.equal(undefined);
      expect(aborted).to.deep.equal(['connecting', 'open', 'closed']);
    });
  });

  describe('when an event’s data is not JSON (garbled on the way)', () => {
    it('takes it for a dropped connection: reconnects after the last event it yielded, and throws nothing', async () => {
      const script = scriptedStream((res, { index }) => {
        res.writeHead(200, eventStreamHead);
        if (index === 0) {
          res.write(sseEvent('unread', '1', unread(0)));
          res.write('event: read\nid: 2\ndata: {"ids":\n\n');
          res.write(sseEvent('unread', '3', unread(1)));
          return;
        }
        res.write(sseEvent('read', '2', { ids: ['r-2'] }));
        res.write(sseEvent('unread', '3', unread(1)));
      });
      const { stream } = await open(script);
      await stream.next('unread', { match: (event) => event.id === '3' });
      expect(stream.events.map((event) => `${event.event}#${event.id}`)).to.deep.equal([
        'unread#1',
        'read#2',
        'unread#3',
      ]);
      expect(script.requests.map((request) => request.lastEventId)).to.deep.equal([null, '1']);
    });
  });

  describe('when an event never ends (a line or an event growing past MAX_EVENT_CHARS)', () => {
    it('takes it for a damaged event: drops the connection and reconnects after the last event it yielded', async () => {
      const script = scriptedStream((res, { index }) => {
        res.writeHead(200, eventStreamHead);
        res.write(sseEvent('unread', `${index + 1}`, unread(index)));
        if (index > 0) return;
        res.write('event: record\nid: 9\ndata: ');
        const chunk = 'x'.repeat(1024 * 1024);
        // More than the client keeps, written as the connection takes it; ends once it is dropped.
        const more = (left: number): void => {
          if (left === 0 || res.destroyed) return;
          if (res.write(chunk)) setImmediate(() => more(left - 1));
          else res.once('drain', () => more(left - 1));
        };
        more(Math.ceil(MAX_EVENT_CHARS / chunk.length) + 4);
      });
      const { stream } = await open(script);
      await stream.next('unread', { match: (event) => event.id === '2', timeoutMs: 10_000 });
      expect(script.requests.map((request) => request.lastEventId)).to.deep.equal([null, '1']);
      expect(stream.events.map((event) => `${event.event}#${event.id}`)).to.deep.equal([
        'unread#1',
        'unread#2',
      ]);
    });
  });

  describe('when an event arrives damaged every time, after one that does not', () => {
    it('backs off, doubling: the event before it does not start the backoff again', async () => {
      const script = scriptedStream((res) => {
        res.writeHead(200, eventStreamHead);
        res.write(sseEvent('unread', '1', unread(1)));
        res.write('event: record\nid: 2\ndata: {"v_tarid_uid": "x", CUT\n\n');
      });
      const initialMs = 100;
      await open(script, { reconnect: { initialMs, maxMs: 10_000 } });
      await waitFor(() => script.requests.length >= 5, 10_000, 'five stream requests');
      const times = script.requests.slice(0, 5).map((request) => request.at);
      // Each at least half of a step doubling from initialMs (a timer is never early).
      times.slice(1).forEach((time, step) => {
        expect(time - times[step]!, `gap ${step}`).to.be.at.least((initialMs * 2 ** step) / 2);
      });
    });
  });

  // A service whose storage is down answers the stream, sends `opened` and `unread`, and ends it
  // when the catch-up read fails: the client backed off for as long as the outage lasted, and
  // onError, which the docs say is told of every failure waited out, heard nothing of it.
  describe('when a stream that opened comes to nothing (onError)', () => {
    /** What onError was told: each error's name, code and message, and the wait after it. */
    const recordErrors = () => {
      const told: { name: string; code: unknown; message: string; retryInMs: number }[] = [];
      const onError = (error: unknown, retryInMs: number) => {
        expect(error).to.be.instanceOf(TrayStreamError);
        const { name, code, message } = error as TrayStreamError;
        told.push({ name, code, message, retryInMs });
      };
      return { told, onError };
    };

    it('tells it of each stream that ended at once or right after its opening `unread`, as `ended-early`', async () => {
      const script = scriptedStream((res, { index }) => {
        res.writeHead(200, eventStreamHead);
        // At once (nothing; `opened` alone), right after `unread` (and `reset`), then held open.
        const opening = [
          '',
          openedEvent(index),
          openedEvent(index) + sseEvent('unread', `u${index}`, unread(index)),
          openedEvent(index) +
            sseEvent('reset', `r${index}`, {}) +
            sseEvent('unread', `u${index}`, unread(index)),
        ][index];
        if (opening === undefined) res.write(openedEvent(index) + sseEvent('unread', 'live', unread(index)));
        else res.end(opening);
      });
      const { told, onError } = recordErrors();
      // A maxMs no stream here stays open for, however loaded the machine: none taken for steady.
      const reconnect = { initialMs: 20, maxMs: 5_000 };
      const { stream } = await open(script, { onError, reconnect });
      await stream.next('unread', { match: (event) => event.id === 'live' });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(told.map((entry) => entry.code)).to.deep.equal([
        'ended-early',
        'ended-early',
        'ended-early',
        'ended-early',
      ]);
      expect(told.map((entry) => entry.name)).to.deep.equal(Array(4).fill('TrayStreamError'));
      expect(told[0]!.message).to.include('at once');
      expect(told[1]!.message).to.include('at once');
      expect(told[2]!.message).to.include('right after its opening `unread`');
      expect(told[3]!.message).to.include('right after its opening `unread`');
      // The waits the backoff took, doubling with each failure, as before.
      told.forEach(({ retryInMs }, step) => {
        const full = reconnect.initialMs * 2 ** step;
        expect(retryInMs, `wait ${step}`).to.be.within(full / 2, full);
      });
      // Resumed after the events yielded, as before.
      expect(script.requests.map((request) => request.lastEventId)).to.deep.equal([
        null,
        null,
        'o1',
        'u2',
        'u3',
      ]);
    });

    it('tells it nothing of a stream that was served and then ended (a service restarting)', async () => {
      const script = scriptedStream((res, { index }) => {
        res.writeHead(200, eventStreamHead);
        res.write(openedEvent(index) + sseEvent('unread', `u${index}`, unread(0)));
        if (index === 0) res.end(sseEvent('read', 'r0', { ids: ['r-0'] }));
      });
      const { told, onError } = recordErrors();
      const { stream } = await open(script, { onError });
      await stream.next('unread', { match: (event) => event.id === 'u1' });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(told).to.deep.equal([]);
    });

    it('tells it of a damaged event, as `damaged-event`, naming the event', async () => {
      const script = scriptedStream((res, { index }) => {
        res.writeHead(200, eventStreamHead);
        res.write(sseEvent('unread', `u${index}`, unread(0)));
        if (index === 0) res.write('event: read\nid: 2\ndata: {"ids":\n\n');
      });
      const { told, onError } = recordErrors();
      const { stream } = await open(script, { onError });
      await stream.next('unread', { match: (event) => event.id === 'u1' });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(told.map((entry) => entry.code)).to.deep.equal(['damaged-event']);
      expect(told[0]!.message).to.include('"read"').and.include('not JSON');
      expect(script.requests.map((request) => request.lastEventId)).to.deep.equal([null, 'u0']);
    });

    it('tells it of an event that grew past MAX_EVENT_CHARS, as `oversized-event`', async () => {
      const script = scriptedStream((res, { index }) => {
        res.writeHead(200, eventStreamHead);
        res.write(sseEvent('unread', `u${index}`, unread(0)));
        if (index > 0) return;
        res.write('event: record\nid: 9\ndata: ');
        const chunk = 'x'.repeat(1024 * 1024);
        const more = (left: number): void => {
          if (left === 0 || res.destroyed) return;
          if (res.write(chunk)) setImmediate(() => more(left - 1));
          else res.once('drain', () => more(left - 1));
        };
        more(Math.ceil(MAX_EVENT_CHARS / chunk.length) + 4);
      });
      const { told, onError } = recordErrors();
      const { stream } = await open(script, { onError });
      await stream.next('unread', { match: (event) => event.id === 'u1', timeoutMs: 10_000 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(told.map((entry) => entry.code)).to.deep.equal(['oversized-event']);
      expect(told[0]!.message).to.include(String(MAX_EVENT_CHARS));
      expect(script.requests.map((request) => request.lastEventId)).to.deep.equal([null, 'u0']);
    });

    it('tells it of a stream silent for idleTimeoutMs, as `idle-timeout`', async () => {
      const idleTimeoutMs = 500;
      const script = scriptedStream((res, { index }) => {
        res.writeHead(200, eventStreamHead);
        res.write(sseEvent('unread', `u${index}`, unread(0)));
        if (index === 0) return;
        const beat = setInterval(() => res.write(': hb\n\n'), 50);
        res.on('close', () => clearInterval(beat));
      });
      const { told, onError } = recordErrors();
      // Three times idleTimeoutMs: the heartbeats of the second stream share this event loop.
      const { stream } = await open(script, { onError, idleTimeoutMs: idleTimeoutMs * 3 });
      await stream.next('unread', { match: (event) => event.id === 'u1', timeoutMs: 10_000 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(told.map((entry) => entry.code)).to.deep.equal(['idle-timeout']);
      expect(told[0]!.message).to.include(`${idleTimeoutMs * 3} ms`);
      expect(script.requests.map((request) => request.lastEventId)).to.deep.equal([null, 'u0']);
    });
  });

  describe('when its signal aborts while getToken is still pending', () => {
    /** How the iteration ended 1 s after the abort: 'ended', 'threw <name>', or 'still going'. */
    const endAfterAbort = async (getToken: (signal: AbortSignal) => Promise<string>) => {
      const controller = new AbortController();
      aborts.push(controller);
      let asked = false;
      const stream = collectStream(
        openTrayStream({
          baseUrl: 'http://127.0.0.1:9',
          getToken: () => ((asked = true), getToken(controller.signal)),
          signal: controller.signal,
        }),
      );
      await waitFor(() => asked, 5_000, 'getToken to be asked');
      controller.abort();
      const pending = new Promise((resolve) => setTimeout(() => resolve('still going'), 1_000));
      const ending = stream.ended.then((error) =>
        error === undefined ? 'ended' : `threw ${(error as Error).name}`,
      );
      return Promise.race([ending, pending]);
    };

    it('ends the iteration cleanly at once', async () => {
      expect(await endAfterAbort(() => new Promise<string>(() => undefined))).to.equal('ended');
    });

    it('ends it cleanly too when getToken rejects because of the abort (the app passed the signal on)', async () => {
      const fromSignal = (signal: AbortSignal) =>
        new Promise<string>((_resolve, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason as Error)),
        );
      expect(await endAfterAbort(fromSignal)).to.equal('ended');
    });
  });

  describe('when its signal aborts while the app handles an event', () => {
    it('yields none of the events that came in the same chunk', async () => {
      const script = scriptedStream((res) => {
        res.writeHead(200, eventStreamHead);
        // One write: the three events reach the client in one chunk.
        res.write(['1', '2', '3'].map((id) => sseEvent('read', id, { ids: [`r-${id}`] })).join(''));
      });
      const controller = new AbortController();
      aborts.push(controller);
      const yielded: string[] = [];
      for await (const event of openTrayStream({
        baseUrl: await servers.serve(script.handler),
        getToken: () => 'a-token',
        signal: controller.signal,
      })) {
        yielded.push(event.id);
        // The view went away while the app handled this event.
        controller.abort();
      }
      expect(yielded).to.deep.equal(['1']);
    });
  });

  describe('when a quiet stream’s heartbeat moved its id (a block with an id and no event)', () => {
    it('reconnects with that id, not the last event’s', async () => {
      const script = scriptedStream((res, { index }) => {
        res.writeHead(200, eventStreamHead);
        res.write(sseEvent('unread', `e${index}`, unread(0)));
        if (index === 0) {
          res.write(': heartbeat\n\nid: moved\n\n');
          setTimeout(() => res.destroy(), 50);
        }
      });
      const { stream } = await open(script);
      await stream.next('unread', { match: (event) => event.id === 'e1' });
      expect(script.requests.map((request) => request.lastEventId)).to.deep.equal([null, 'moved']);
    });
  });

  describe('when the resume point moves (onResumePoint)', () => {
    it('tells an event’s id only once the app has taken it (asked for the next)', async () => {
      const told: string[] = [];
      const script = scriptedStream((res) => {
        res.writeHead(200, eventStreamHead);
        res.write(sseEvent('unread', 'e1', unread(0)));
        res.write(sseEvent('unread', 'e2', unread(1)));
      });
      const controller = new AbortController();
      aborts.push(controller);
      const toldAtEach: string[][] = [];
      for await (const event of openTrayStream({
        baseUrl: await servers.serve(script.handler),
        getToken: () => 'a-token',
        signal: controller.signal,
        onResumePoint: (id) => told.push(id),
      })) {
        toldAtEach.push([...told]);
        // An app that stops here has not finished with e2: a later stream must resume before it.
        if (event.id === 'e2') break;
      }
      expect(toldAtEach).to.deep.equal([[], ['e1']]);
      expect(told).to.deep.equal(['e1']);
    });

    it('tells each event’s id, then the id a heartbeat moved it to', async () => {
      const told: string[] = [];
      const script = scriptedStream((res, { index }) => {
        res.writeHead(200, eventStreamHead);
        if (index > 0) return;
        res.write(sseEvent('unread', 'e1', unread(0)));
        res.write(sseEvent('unread', 'e2', unread(1)));
        // A quiet stream's heartbeat, later, in a chunk of its own: no event to yield.
        setTimeout(() => res.write(': heartbeat\n\nid: moved\n\n'), 100);
      });
      const { stream } = await open(script, { onResumePoint: (id) => told.push(id) });
      await stream.next('unread', { match: (event) => event.id === 'e2' });
      await waitFor(() => told.includes('moved'), 5_000, 'the heartbeat’s id');
      expect(told).to.deep.equal(['e1', 'e2', 'moved']);
    });

    it('does not tell the id of a garbled event, nor one the stream was opened with', async () => {
      const told: string[] = [];
      const script = scriptedStream((res, { index }) => {
        res.writeHead(200, eventStreamHead);
        if (index === 0) {
          res.write(sseEvent('unread', '1', unread(0)));
          res.write('event: read\nid: 2\ndata: {"ids":\n\n');
          return;
        }
        res.write(sseEvent('read', '2', { ids: ['r-2'] }));
      });
      const { stream } = await open(script, { lastEventId: '0', onResumePoint: (id) => told.push(id) });
      await stream.next('read', { match: (event) => event.id === '2' });
      await waitFor(() => told.includes('2'), 5_000, 'the redelivered event’s id');
      expect(told).to.deep.equal(['1', '2']);
    });
  });

  describe('when the connection drops after an event’s id line, before its blank line', () => {
    it('resumes after the last event it yielded, and so yields the cut event', async () => {
      const script = scriptedStream((res, { index, lastEventId }) => {
        res.writeHead(200, eventStreamHead);
        if (index === 0) {
          res.write(sseEvent('unread', '1', unread(0)));
          res.write('event: read\nid: 2\ndata: {"ids":');
          setTimeout(() => res.destroy(), 50);
          return;
        }
        // As the service does: what came after the id the client resumed from.
        if (lastEventId === '1') res.write(sseEvent('read', '2', { ids: ['r-2'] }));
        res.write(sseEvent('unread', '3', unread(1)));
      });
      const { stream } = await open(script);
      await stream.next('unread', { match: (event) => event.id === '3' });
      expect(stream.events.map((event) => `${event.event}#${event.id}`)).to.deep.equal([
        'unread#1',
        'read#2',
        'unread#3',
      ]);
      expect(script.requests.map((request) => request.lastEventId)).to.deep.equal([null, '1']);
    });
  });
});

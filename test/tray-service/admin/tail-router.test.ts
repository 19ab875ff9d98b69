import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { startRedis, type LocalServer } from '../../../scripts/lib/local-servers.ts';
import { closeServer, listen } from '../../../shared/http/listen.ts';
import { createRedis } from '../../../shared/redis/create-redis.ts';
import { storedEventsChannel } from '../../../tray-service/admin/stored-events-channel.ts';
import { uniqueName } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { waitFor } from '../../support/wait-for.ts';
import { dataOf, openSse, type SseStream } from '../live/support/sse-client.ts';
import { ADMIN_TOKEN, adminApp, adminJwt, sessionCookie } from './admin-fixtures.ts';
import { leaveDuringLookup } from './leave-during-lookup.ts';
import { stalledGet } from './stalled-reader.ts';

/** Resolves true when the stream ends within `ms`, false when it is still open then. */
const endsWithin = (stream: SseStream, ms: number) =>
  Promise.race([
    stream.ended.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms)),
  ]);

/** 64 KB of payload per announcement. */
const LARGE_TEXT = 'x'.repeat(64 * 1024);

/**
 * Announces applied events of 64 KB on `prefix`'s channel, as workers do, one at a time while
 * `more(n)` holds for the n sent so far (512 at most: 32 MB); returns how many went.
 */
async function announceLarge(prefix: string, more: (sent: number) => boolean = () => true): Promise<number> {
  const redis = createRedis(testStack().redisUrl);
  const at = new Date().toISOString();
  let sent = 0;
  try {
    while (sent < 512 && more(sent)) {
      const event = { key: `large-${sent}`, event: 'post.didCreate', webhook: 'main' };
      await redis.publish(
        storedEventsChannel(prefix),
        JSON.stringify({
          ...event,
          status: 'applied',
          receivedAt: at,
          storedAt: at,
          expiresAt: at,
          data: { text: LARGE_TEXT },
        }),
      );
      sent += 1;
    }
  } finally {
    redis.disconnect();
  }
  return sent;
}

describe('GET /admin/events/tail: a tail lasts only as long as its credential', function () {
  this.timeout(30_000);
  const suite = useTrayStorage();
  let server: Server;
  let base: string;
  let closeApp: () => void;
  // The clock sessions are checked against; a test moves it forward.
  let offsetMs = 0;
  const tails: SseStream[] = [];

  before(async () => {
    const built = adminApp(suite.storage, {
      deps: { tailHeartbeatMs: 200 },
      clock: () => Date.now() + offsetMs,
    });
    closeApp = built.close;
    server = await listen(built.app, { port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  beforeEach(() => {
    offsetMs = 0;
  });
  after(async () => {
    for (const tail of tails) tail.close();
    await closeServer(server, 100);
    closeApp();
  });

  const signIn = (token: string) => sessionCookie(base, token);
  const tail = async (headers: Record<string, string>, at = base) => {
    const stream = await openSse(`${at}/admin/events/tail`, headers);
    tails.push(stream);
    expect(stream.status).to.equal(200);
    return stream;
  };

  it('stays open while the session holds', async () => {
    const stream = await tail({ Cookie: await signIn(ADMIN_TOKEN) });
    expect(await endsWithin(stream, 800)).to.equal(false);
  });

  it('ends at the next heartbeat once its session signs out', async () => {
    const cookie = await signIn(ADMIN_TOKEN);
    const stream = await tail({ Cookie: cookie });
    await request(base).post('/admin/logout').set('Cookie', cookie).expect(303);
    expect(await endsWithin(stream, 2_000)).to.equal(true);
  });

  it('ends once its session expires', async () => {
    const stream = await tail({ Cookie: await signIn(ADMIN_TOKEN) });
    offsetMs = 9 * 3600 * 1000;
    expect(await endsWithin(stream, 2_000)).to.equal(true);
  });

  it("ends at the expiry of the admin JWT it was opened with (bearer, or a session's)", async () => {
    // Seconds enough to open both tails on a loaded machine before it expires.
    const jwt = await adminJwt('ops-ana', '4s');
    const bearer = await tail({ Authorization: `Bearer ${jwt}` });
    const session = await tail({ Cookie: await signIn(jwt) });
    const started = Date.now();
    expect(await endsWithin(bearer, 7_000)).to.equal(true);
    expect(await endsWithin(session, 1_000)).to.equal(true);
    expect(Date.now() - started).to.be.below(6_000);
  });

  describe('tails per admin (ADMIN_TAILS_PER_ADMIN), not one pool for all', () => {
    let capped: { server: Server; base: string; close: () => void; feed: { readonly listeners: number } };
    before(async () => {
      const built = adminApp(suite.storage, { deps: { tailsPerAdmin: 2 } });
      const listening = await listen(built.app, { port: 0, host: '127.0.0.1' });
      capped = {
        server: listening,
        base: `http://127.0.0.1:${(listening.address() as AddressInfo).port}`,
        close: built.close,
        feed: built.eventsFeed,
      };
    });
    after(async () => {
      await closeServer(capped.server, 100);
      capped.close();
    });
    const open = async (headers: Record<string, string>) => {
      const stream = await openSse(`${capped.base}/admin/events/tail`, headers);
      tails.push(stream);
      return stream;
    };

    it('refuses an admin over their own limit with 429 (code 429001), and leaves another admin theirs', async () => {
      const token = { Authorization: `Bearer ${ADMIN_TOKEN}` };
      const first = await open(token);
      expect((await open(token)).status).to.equal(200);
      const over = await open(token);
      expect(over.status).to.equal(429);
      expect(over.headers['retry-after']).to.match(/^\d+$/);
      expect(JSON.parse(await over.body())).to.include({ code: 429001 });
      const other = await open({ Authorization: `Bearer ${await adminJwt('ops-ben')}` });
      expect(other.status).to.equal(200);
      // A tail that ends gives its place back.
      first.close();
      await first.ended;
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await open(token)).status).to.equal(200);
    });

    it('answers HEAD 405 at once (Allow: GET), taking no place and listening to nothing', async () => {
      for (const stream of tails) stream.close();
      await waitFor(() => capped.feed.listeners === 0, 5_000, 'no tail listening');
      const head = await fetch(`${capped.base}/admin/events/tail`, {
        method: 'HEAD',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
        signal: AbortSignal.timeout(5_000),
      });
      expect(head.status).to.equal(405);
      expect(head.headers.get('allow')).to.equal('GET');
      expect(capped.feed.listeners).to.equal(0);
    });

    it('gives the place back, and listens to nothing, when the client left while its session was looked up', async () => {
      const token = { Authorization: `Bearer ${ADMIN_TOKEN}` };
      for (const stream of tails) stream.close();
      await waitFor(async () => (await open(token)).status === 200, 5_000, 'a free place');
      for (const stream of tails) stream.close();
      await waitFor(() => capped.feed.listeners === 0, 5_000, 'no tail listening');
      const cookie = await sessionCookie(capped.base);
      const port = (capped.server.address() as AddressInfo).port;
      for (let n = 0; n < 2; n += 1)
        await leaveDuringLookup(port, '/admin/events/tail', cookie, testStack().redisUrl);
      expect(capped.feed.listeners, 'tails listening for clients that left').to.equal(0);
      const [first, second] = [await open(token), await open(token)];
      expect([first.status, second.status]).to.deep.equal([200, 200]);
    });
  });

  describe('a reader that stops reading', () => {
    const prefix = uniqueName('tail-stall');
    let stalled: { server: Server; port: number; built: ReturnType<typeof adminApp> };
    before(async () => {
      const built = adminApp(suite.storage, {
        streamPrefix: prefix,
        deps: { tailMaxBufferedBytes: 64 * 1024 },
      });
      const listening = await listen(built.app, { port: 0, host: '127.0.0.1' });
      stalled = { server: listening, port: (listening.address() as AddressInfo).port, built };
    });
    after(async () => {
      await closeServer(stalled.server, 100);
      stalled.built.close();
    });

    it('is cut off once more than the cap waits for it, instead of every event piling up in memory', async () => {
      const reader = await stalledGet(stalled.port, '/admin/events/tail');
      expect(reader.status).to.equal('HTTP/1.1 200 OK');
      const feed = stalled.built.eventsFeed;
      expect(feed.listeners).to.equal(1);
      // Announcements until the tail is cut off; 32 MB at most, far beyond what the sockets of
      // both ends hold for a reader that does not read (the rest would be the process's memory).
      const published = await announceLarge(prefix, () => feed.listeners > 0);
      const until = Date.now() + 5_000;
      while (feed.listeners > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(feed.listeners, `tails still open after ${published} announcements of 64 KB`).to.equal(0);
      // The reader gets what the sockets held, then the end: EventSource reconnects.
      const received = await reader.readToEnd();
      expect(received).to.be.below(published * LARGE_TEXT.length);
    });
  });

  describe('a reader that stops reading with less than the cap waiting, when its tail ends', () => {
    const prefix = uniqueName('tail-end');
    let ending: { server: Server; port: number; base: string; built: ReturnType<typeof adminApp> };
    before(async () => {
      const built = adminApp(suite.storage, {
        streamPrefix: prefix,
        deps: {
          tailMaxBufferedBytes: 256 << 20,
          tailsPerAdmin: 1,
          tailHeartbeatMs: 200,
          tailEndGraceMs: 300,
        },
      });
      const listening = await listen(built.app, { port: 0, host: '127.0.0.1' });
      const port = (listening.address() as AddressInfo).port;
      ending = { server: listening, port, base: `http://127.0.0.1:${port}`, built };
    });
    after(async () => {
      await closeServer(ending.server, 100);
      ending.built.close();
    });

    // The end of a response waits behind what its reader never takes: without a limit the tail
    // held the admin's place and its socket for as long as the connection stayed up.
    it('is dropped shortly after its end (a sign-out), giving the admin their place back', async () => {
      const cookie = await sessionCookie(ending.base, ADMIN_TOKEN);
      const reader = await stalledGet(ending.port, '/admin/events/tail', `Cookie: ${cookie}`);
      expect(reader.status).to.equal('HTTP/1.1 200 OK');
      const feed = ending.built.eventsFeed;
      // 32 MB the reader never takes, far beyond what the sockets of both ends hold and far below
      // the cap: the rest waits in the response, and the tail stays open.
      await announceLarge(prefix);
      expect(feed.listeners).to.equal(1);
      await request(ending.base).post('/admin/logout').set('Cookie', cookie).expect(303);
      await waitFor(() => feed.listeners === 0, 3_000, 'the tail to end at the heartbeat after the sign-out');
      const token = { Authorization: `Bearer ${ADMIN_TOKEN}` };
      let next: SseStream | undefined;
      const until = Date.now() + 3_000;
      while (Date.now() < until) {
        next = await openSse(`${ending.base}/admin/events/tail`, token);
        tails.push(next);
        if (next.status === 200) break;
        next.close();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(next?.status, 'the same admin opening a tail after the grace').to.equal(200);
      // The reader then finds the connection closed before it got what was written.
      expect(await reader.readToEnd()).to.be.below(512 * LARGE_TEXT.length);
    });
  });

  describe('a reader that keeps up', () => {
    const prefix = uniqueName('tail-large');
    let keeping: { server: Server; base: string; built: ReturnType<typeof adminApp> };
    before(async () => {
      const built = adminApp(suite.storage, {
        streamPrefix: prefix,
        deps: { tailMaxBufferedBytes: 64 * 1024 },
      });
      const listening = await listen(built.app, { port: 0, host: '127.0.0.1' });
      keeping = {
        server: listening,
        base: `http://127.0.0.1:${(listening.address() as AddressInfo).port}`,
        built,
      };
    });
    after(async () => {
      await closeServer(keeping.server, 100);
      keeping.built.close();
    });

    // The cap is on what waits for the reader before an event is written, not on the event itself:
    // a reader that keeps up gets an event larger than the cap (a payload up to the receiver's
    // body limit) and stays connected.
    it('gets an event larger than the cap whole, and the tail stays open for the next', async () => {
      const stream = await tail({ Authorization: `Bearer ${ADMIN_TOKEN}` }, keeping.base);
      const redis = createRedis(testStack().redisUrl);
      const at = new Date().toISOString();
      const text = 'x'.repeat(8 * 1024 * 1024);
      try {
        for (const [key, data] of [
          ['large', { text }],
          ['small', {}],
        ] as const)
          await redis.publish(
            storedEventsChannel(prefix),
            JSON.stringify({
              key,
              event: 'post.didCreate',
              webhook: 'main',
              status: 'applied',
              receivedAt: at,
              storedAt: at,
              expiresAt: at,
              data,
            }),
          );
      } finally {
        redis.disconnect();
      }
      const cutOff = stream.ended.then(() => {
        throw new Error('the tail ended before the event after the large one');
      });
      await Promise.race([stream.next((event) => event.id === 'small', { timeoutMs: 20_000 }), cutOff]);
      const large = stream.events.find((event) => event.id === 'large');
      expect(large, 'the large event').to.not.equal(undefined);
      if (large) expect(dataOf<{ data: { text: string } }>(large).data.text).to.have.lengthOf(text.length);
      expect(keeping.built.eventsFeed.listeners).to.equal(1);
      stream.close();
    });
  });

  describe('while Redis is unreachable', () => {
    let dir: string;
    let redis: LocalServer;
    let own: { server: Server; base: string; close: () => void };
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'tail-redis-'));
      // Persistent, so the session outlives the restart as it does on a production Redis.
      redis = await startRedis({ dir, persistent: true });
      const built = adminApp(suite.storage, { redisUrl: redis.url, deps: { tailHeartbeatMs: 200 } });
      const listening = await listen(built.app, { port: 0, host: '127.0.0.1' });
      own = {
        server: listening,
        base: `http://127.0.0.1:${(listening.address() as AddressInfo).port}`,
        close: built.close,
      };
    });
    after(async () => {
      await closeServer(own.server, 100);
      own.close();
      await redis.stop('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    });

    it('refuses a tail it cannot subscribe for with 503 as JSON, not as an event stream', async () => {
      await redis.stop();
      try {
        const res = await fetch(`${own.base}/admin/events/tail`, {
          headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
        });
        expect(res.status).to.equal(503);
        expect(res.headers.get('content-type')).to.match(/^application\/json/);
        expect(await res.json()).to.include({ status: 'error', code: 503000 });
      } finally {
        redis = await startRedis({ dir, port: redis.port, persistent: true });
      }
    });

    it('keeps a session’s tail open through the outage, and still ends it at sign-out once Redis is back', async () => {
      const cookie = await sessionCookie(own.base);
      const stream = await openSse(`${own.base}/admin/events/tail`, { Cookie: cookie });
      tails.push(stream);
      expect(stream.status).to.equal(200);
      await redis.stop();
      // Heartbeats every 200 ms: each checks the session, and none can reach Redis.
      expect(await endsWithin(stream, 1_500), 'ended while Redis was down').to.equal(false);
      redis = await startRedis({ dir, port: redis.port, persistent: true });
      expect(await endsWithin(stream, 1_500), 'ended once Redis was back').to.equal(false);
      await waitFor(
        async () => (await request(own.base).post('/admin/logout').set('Cookie', cookie)).status === 303,
        10_000,
        'the sign-out, once Redis answers again',
      );
      expect(await endsWithin(stream, 2_000), 'ended after the sign-out').to.equal(true);
    });
  });
});

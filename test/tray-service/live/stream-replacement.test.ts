import { expect } from 'chai';
import { connect, type Socket } from 'node:net';
import { newStreamId } from '../../../tray-service/live/stream-slots.ts';
import { bearer } from '../api/support/api-harness.ts';
import { useLiveTray } from './support/live-harness.ts';
import { dataOf, named, openSse, type SseStream } from './support/sse-client.ts';

const STREAM = '/notifications/v3/stream';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The stream ended with `replaced` (with an id to resume from), and a reconnect hint after it. */
async function expectReplaced(replaced: SseStream): Promise<void> {
  const event = await replaced.next(named('replaced'), { timeoutMs: 5_000 });
  expect(dataOf(event)).to.deep.equal({ reason: 'stream-limit', reconnect: false });
  expect(event.id).to.be.a('string').and.not.equal('');
  await replaced.ended;
  expect(replaced.events.at(-1)).to.deep.include({ event: 'retry', retry: 30_000 });
}

// A user's streams beyond STREAMS_PER_USER: the newest takes the place of the oldest, whichever
// instance holds it, so a stream whose client vanished without closing it (its server side open
// until TCP gives up, a quarter of an hour) never locks its user out.
describe('live streams at the per-user limit', function () {
  this.timeout(60_000);
  const tray = useLiveTray({ instances: 2, streamsPerUser: 2, heartbeatMs: 200 });
  const open: SseStream[] = [];
  const sockets: Socket[] = [];
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
    for (const socket of sockets.splice(0)) socket.destroy();
  });

  async function stream(instance: number, user: string): Promise<SseStream> {
    const opened = await openSse(`${tray.instance(instance).base}${STREAM}`, {
      Authorization: await bearer(user),
    });
    open.push(opened);
    expect(opened.status).to.equal(200);
    await opened.next(named('unread'));
    return opened;
  }

  it('end the oldest with `replaced` when a new one opens, on the same or another instance', async () => {
    const user = 'u-places';
    const first = await stream(0, user);
    const second = await stream(1, user);
    const third = await stream(1, user);
    await expectReplaced(first);
    const fourth = await stream(0, user);
    await expectReplaced(second);
    // The two newest stay, and take events as before.
    await sleep(300);
    for (const kept of [third, fourth]) expect(kept.events.filter(named('replaced'))).to.deep.equal([]);
    expect(tray.instance(0).live.hub.size + tray.instance(1).live.hub.size).to.equal(2);
  });

  it('do not lock out a user whose earlier clients stopped reading without closing', async () => {
    const user = 'u-vanished';
    const { base } = tray.instance(0);
    const port = Number(new URL(base).port);
    const gone: { socket: Socket; got: () => string }[] = [];
    for (let index = 0; index < 2; index += 1) {
      const socket = connect(port, '127.0.0.1');
      sockets.push(socket);
      let got = '';
      socket.on('data', (chunk: Buffer) => (got += chunk.toString()));
      socket.write(`GET ${STREAM} HTTP/1.1\r\nHost: x\r\nAuthorization: ${await bearer(user)}\r\n\r\n`);
      while (!got.includes('event: unread')) await sleep(20);
      // Reads nothing more: to the server, as good as a client whose network went away (its
      // heartbeats still fit in the socket's buffers).
      socket.pause();
      gone.push({ socket, got: () => got });
    }
    const fresh = await stream(1, user);
    expect(fresh.status).to.equal(200);
    const again = await stream(0, user);
    expect(again.status).to.equal(200);
    // What a client that reads again finds: it was told, and the response ended (its last chunk).
    for (const { socket, got } of gone) {
      socket.resume();
      const deadline = Date.now() + 5_000;
      while (!got().endsWith('\r\n0\r\n\r\n') && Date.now() < deadline) await sleep(20);
      expect(got()).to.match(
        /event: replaced\nid: [^\n]+\ndata: \{"reason":"stream-limit","reconnect":false\}/,
      );
      expect(got()).to.match(/retry: 30000\n\n\r\n0\r\n\r\n$/);
    }
  });

  it('end a replaced stream at its next heartbeat when the announcement never reached its instance', async () => {
    const user = 'u-unannounced';
    const held = await stream(0, user);
    await stream(0, user);
    // A third stream's slot taken as another instance would, its announcement lost (pub/sub
    // delivers at most once): the holder's renewal finds its stream replaced.
    const { live } = tray.instance(1);
    const replaced = await live.slots.acquire(user, newStreamId(Date.now()));
    expect(replaced).to.have.length(1);
    await expectReplaced(held);
  });
});

// A stream that took other streams' places but never opened gives them back. The heartbeat is
// long here: a renewal that read the mark in the moment between the acquire and the give-back
// ends its stream (each renewal is asked directly below instead).
describe('live streams at the per-user limit, a stream that never opens', function () {
  this.timeout(60_000);
  const tray = useLiveTray({ instances: 2, streamsPerUser: 2, heartbeatMs: 60_000 });
  const open: SseStream[] = [];
  const sockets: Socket[] = [];
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
    for (const socket of sockets.splice(0)) socket.destroy();
  });

  async function stream(instance: number, user: string): Promise<{ sse: SseStream; id: string }> {
    const sse = await openSse(`${tray.instance(instance).base}${STREAM}`, {
      Authorization: await bearer(user),
    });
    open.push(sse);
    const { streamId } = dataOf(await sse.next(named('opened'))) as { streamId: string };
    await sse.next(named('unread'));
    return { sse, id: streamId };
  }

  /** Neither told it was replaced, nor told so at its next renewal, on whichever instance. */
  async function expectKept(user: string, kept: { sse: SseStream; id: string }[]): Promise<void> {
    await sleep(300);
    for (const { sse, id } of kept) {
      expect(sse.events.filter(named('replaced'))).to.deep.equal([]);
      expect(await tray.instance(0).live.slots.renew(user, id), `the renewal of ${id}`).to.equal(true);
    }
  }

  it('keeps the others in their places when its client left while it was authorised', async () => {
    const user = 'u-gone-first';
    const kept = [await stream(0, user), await stream(1, user)];
    const { live, base } = tray.instance(1);
    const socket = connect(Number(new URL(base).port), '127.0.0.1');
    sockets.push(socket);
    const gone = new Promise((resolve) => socket.once('close', resolve));
    // The aborted request's slot is taken, then held back until its client has gone (a socket
    // closed on loopback is seen at once); `handed` resolves once the hub has had it.
    const acquire = live.slots.acquire.bind(live.slots);
    const open = live.hub.open.bind(live.hub);
    const handed = new Promise<void>((resolve) => {
      live.slots.acquire = async (...args) => {
        live.slots.acquire = acquire;
        const replaced = await acquire(...args);
        await gone;
        await sleep(50);
        return replaced;
      };
      live.hub.open = (...args) => {
        live.hub.open = open;
        open(...args);
        resolve();
      };
    });
    socket.write(`GET ${STREAM} HTTP/1.1\r\nHost: x\r\nAuthorization: ${await bearer(user)}\r\n\r\n`, () =>
      socket.destroy(),
    );
    await handed;
    await expectKept(user, kept);
    expect(tray.instance(0).live.hub.size + tray.instance(1).live.hub.size).to.equal(2);
    // And the two still count: a third stream takes the oldest's place.
    await stream(0, user);
    await expectReplaced((kept[0] as { sse: SseStream }).sse);
  });

  it('keeps the others in their places when it arrives after shutdown began', async () => {
    const user = 'u-late';
    const kept = [await stream(0, user), await stream(0, user)];
    await tray.instance(1).live.hub.close(1_000);
    const late = await openSse(`${tray.instance(1).base}${STREAM}`, { Authorization: await bearer(user) });
    await late.ended;
    expect(late.events.filter(named('unread')), 'ended at once, with nothing to tell').to.deep.equal([]);
    await expectKept(user, kept);
    expect(tray.instance(0).live.hub.size).to.equal(2);
  });
});

import { expect } from 'chai';
import { connect, type Socket } from 'node:net';
import { bearer } from '../api/support/api-harness.ts';
import { useLiveTray } from './support/live-harness.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// A client that stops reading: past the overflow limit its stream ends, and its connection must be
// dropped then, not ended gracefully (the end would wait for bytes it never reads, holding them).
describe('live streams of a client that stops reading', function () {
  this.timeout(60_000);
  const tray = useLiveTray({ instances: 1, streamsPerUser: 1 });

  it('drop its connection, and with it the bytes buffered for it, every time it overflows', async () => {
    const { server, base, live } = tray.instance(0);
    const serverSockets: Socket[] = [];
    server.on('connection', (s: Socket) => serverSockets.push(s));
    const port = Number(new URL(base).port);
    const user = 'u-stall';
    const clients: Socket[] = [];

    for (let cycle = 0; cycle < 3; cycle += 1) {
      const client = connect(port, '127.0.0.1');
      clients.push(client);
      let got = '';
      client.on('data', (chunk) => (got += chunk.toString()));
      client.write(
        `GET /notifications/v3/stream HTTP/1.1\r\nHost: x\r\nAuthorization: ${await bearer(user)}\r\n\r\n`,
      );
      while (!got.includes('event: unread')) await sleep(20);
      expect(got).to.match(/^HTTP\/1.1 200/);
      client.pause(); // the client stops reading: a stalled consumer
      const ids = Array.from({ length: 10_000 }, (_, i) => `removed_${'x'.repeat(80)}_${i}`); // ~1 MB
      while (live.hub.size > 0) {
        await tray.changes.recordsRemoved(ids.map((key) => ({ userId: user, key })));
        await sleep(50);
      }
      await sleep(500);
      expect(
        serverSockets.filter((s) => !s.destroyed),
        `sockets held after overflow ${cycle + 1}`,
      ).to.have.length(0);
    }
    for (const c of clients) c.destroy();
  });
});

// A quiet tray's stream gets only heartbeats: a client that stopped reading it was never found, its
// buffer growing by every heartbeat (and its lease renewed) for as long as it stayed connected.
describe('a quiet live stream of a client that stops reading', function () {
  this.timeout(60_000);
  const LIMIT = 64 * 1024;
  const tray = useLiveTray({ instances: 1, streamsPerUser: 1, heartbeatMs: 10, maxBufferedBytes: LIMIT });

  it('is dropped once its heartbeats pass the buffer limit', async () => {
    const { server, base, live } = tray.instance(0);
    const serverSockets: Socket[] = [];
    server.on('connection', (s: Socket) => serverSockets.push(s));
    const user = 'u-quiet-stall';
    const client = connect(Number(new URL(base).port), '127.0.0.1');
    let got = '';
    client.on('data', (chunk) => (got += chunk.toString()));
    client.write(
      `GET /notifications/v3/stream HTTP/1.1\r\nHost: x\r\nAuthorization: ${await bearer(user)}\r\n\r\n`,
    );
    while (!got.includes('event: unread')) await sleep(20);
    client.pause();
    const socket = serverSockets.find((s) => !s.destroyed);
    expect(socket, "the stream's socket").to.not.equal(undefined);
    // Removals fill the kernel's buffers, then this process's up to just under the limit: what
    // is left for the heartbeats to pass is a couple of kilobytes.
    let n = 0;
    const removed = (count: number, size: number) =>
      tray.changes.recordsRemoved(
        Array.from({ length: count }, () => ({
          userId: user,
          key: `removed_${'x'.repeat(size)}_${(n += 1)}`,
        })),
      );
    while ((socket?.writableLength ?? 0) === 0 && live.hub.size > 0) {
      await removed(100, 100);
      await sleep(5);
    }
    while ((socket?.writableLength ?? 0) < LIMIT - 3_000 && live.hub.size > 0) {
      await removed(5, 100);
      await sleep(20);
    }
    expect(live.hub.size, 'open before the heartbeats pass the limit').to.equal(1);
    const deadline = Date.now() + 20_000;
    while (live.hub.size > 0 && Date.now() < deadline) await sleep(50);
    expect(live.hub.size, 'open after 20 s of heartbeats').to.equal(0);
    await sleep(200);
    expect(socket?.destroyed, 'its socket dropped').to.equal(true);
    client.destroy();
  });
});

import { expect } from 'chai';
import { createServer, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { dropStalledReader } from '../../../tray-service/admin/drop-stalled-reader.ts';

/**
 * Serves one GET with `respond`, to a client that reads the first bytes and then nothing; answers
 * whether the server dropped the response (and when), and how many bytes the client got by then.
 */
async function stalledClient(
  respond: (res: ServerResponse, dropped: () => void) => void,
): Promise<{ droppedAfterMs: number | undefined; closed: boolean }> {
  let droppedAt: number | undefined;
  const server = createServer((_req, res) => respond(res, () => (droppedAt = Date.now())));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  socket.on('error', () => undefined);
  const started = Date.now();
  try {
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await new Promise((resolve) => socket.once('data', resolve));
    socket.pause();
    const closed = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 3_000);
      socket.once('close', () => {
        clearTimeout(timer);
        resolve(true);
      });
      // A paused socket sees the server's reset only once it reads again: after the cut-off.
      const poll = setInterval(() => {
        if (droppedAt !== undefined) {
          clearInterval(poll);
          socket.resume();
        }
      }, 20);
      socket.once('close', () => clearInterval(poll));
      setTimeout(() => clearInterval(poll), 3_000).unref();
    });
    return { droppedAfterMs: droppedAt === undefined ? undefined : droppedAt - started, closed };
  } finally {
    socket.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

// More than loopback's socket buffers hold, so a reader that stops keeps most of it waiting.
const BIG = Buffer.alloc(32 * 1024 * 1024, 'x');

describe('dropStalledReader', function () {
  this.timeout(20_000);

  it('drops a response whose reader stopped while its writes wait', async () => {
    const { droppedAfterMs, closed } = await stalledClient((res, dropped) => {
      dropStalledReader(res, 200, dropped);
      res.write(BIG);
    });
    expect(droppedAfterMs).to.be.a('number');
    expect(closed).to.equal(true);
  });

  // An export's last rows were written and the response ended while its reader had stopped: the
  // response was no longer waiting for a drain, so it was never cut off, and its 'finish' (which
  // gives the export's slot back) never came while the connection stayed up.
  it('drops an ended response whose reader never takes the rest', async () => {
    const { droppedAfterMs, closed } = await stalledClient((res, dropped) => {
      dropStalledReader(res, 200, dropped);
      res.end(BIG);
    });
    expect(droppedAfterMs, 'dropped').to.be.a('number');
    expect(closed).to.equal(true);
  });

  it('leaves a response whose reader takes it slowly but steadily', async () => {
    let droppedAt: number | undefined;
    const server = createServer((_req, res) => {
      // An idle time no stall of this process's event loop reaches: reader and server share it, and
      // the check runs before the reads a stall held back.
      dropStalledReader(res, 1_000, () => (droppedAt = Date.now()));
      res.end(Buffer.alloc(16 * 1024 * 1024, 'y'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    try {
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
      let received = 0;
      socket.on('data', (chunk: Buffer) => (received += chunk.length));
      // Reads for 10 ms of every 100: never nothing for the idle time.
      socket.pause();
      const reading = setInterval(() => {
        socket.resume();
        setTimeout(() => socket.pause(), 10);
      }, 100);
      await new Promise((resolve) => socket.once('end', resolve).once('close', resolve));
      clearInterval(reading);
      expect(droppedAt, 'dropped while reading').to.equal(undefined);
      expect(received).to.be.above(0);
    } finally {
      socket.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  // One chunk larger than the socket buffers (an export's row of a large event) leaves the response's
  // length unchanged until its last byte is taken: a reader taking it steadily over several idle
  // times was judged stalled and cut off mid-row.
  it('leaves a single large write that its reader takes steadily over several idle times', async () => {
    let droppedAt: number | undefined;
    // Two and a half idle times to read at the pace below (an idle time no stall of this process's
    // event loop reaches, as above).
    const body = Buffer.alloc(16 * 1024 * 1024, 'z');
    const server = createServer((_req, res) => {
      dropStalledReader(res, 1_000, () => (droppedAt = Date.now()));
      res.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    const started = Date.now();
    try {
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
      let received = 0;
      // One read (at most 64 KiB) every 10 ms: a steady trickle, never an idle time's gap.
      socket.on('data', (chunk: Buffer) => {
        received += chunk.length;
        socket.pause();
        setTimeout(() => socket.resume(), 10);
      });
      await new Promise((resolve) => socket.once('end', resolve).once('close', resolve));
      expect(droppedAt, 'dropped while reading').to.equal(undefined);
      expect(received, 'whole body and headers').to.be.above(body.length);
      expect(Date.now() - started, 'taken over several idle times').to.be.above(2_000);
    } finally {
      socket.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

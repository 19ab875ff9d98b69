import { expect } from 'chai';
import express from 'express';
import type { Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { createMessageRenderer } from '../../../tray-service/messages/create-message-renderer.ts';
import { freshCursor } from '../../../tray-service/live/stream-cursor.ts';
import { createStreamSession, type StreamSession } from '../../../tray-service/live/stream-session.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// One session over a real connection whose client stops reading: what the buffer limit ends and
// what it leaves alone.
describe('a stream session whose client stops reading', function () {
  this.timeout(30_000);
  let server: Server;
  let opened: (session: StreamSession) => void;
  let overflowed: string[];
  const LIMIT = 1024;
  before(async () => {
    const app = express();
    app.get('/s', (_req, res) => {
      const session = createStreamSession(
        res,
        { userId: 'u-s', streamId: 's-1', locale: 'en', cursor: freshCursor(Date.now()), start: 'fresh' },
        {
          messages: createMessageRenderer({ defaultLocale: 'en' }),
          sent: () => undefined,
          overflow: () => void overflowed.push('overflow'),
          maxBuffered: LIMIT,
        },
      );
      opened(session);
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
  });
  after(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });

  /** A session and its client, which has read the headers and stopped reading. */
  async function stalled(): Promise<{ session: StreamSession; client: Socket }> {
    overflowed = [];
    const session = new Promise<StreamSession>((resolve) => (opened = resolve));
    const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
    let got = '';
    client.on('data', (chunk) => (got += chunk.toString()));
    client.write('GET /s HTTP/1.1\r\nHost: x\r\n\r\n');
    const open = await session;
    while (!got.includes('\r\n\r\n')) await sleep(5);
    client.pause();
    return { session: open, client };
  }

  // A catch-up's page may be larger than the limit: its write waits for the client to take it
  // (up to 10 s). A heartbeat written during that wait ended the stream there.
  it('is not ended by a heartbeat while a paced page waits for it', async () => {
    const { session, client } = await stalled();
    const ids = Array.from({ length: 100_000 }, (_, i) => `removed_${'x'.repeat(60)}_${i}`); // ~8 MB, past the sockets' buffers
    const page = session.paced(() => session.removed(ids));
    await sleep(200);
    session.comment('heartbeat');
    expect(overflowed, 'overflow during the paced wait').to.deep.equal([]);
    client.resume();
    await page;
    expect(overflowed).to.deep.equal([]);
    client.destroy();
  });
});

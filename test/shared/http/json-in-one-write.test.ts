import { expect } from 'chai';
import express, { type Express } from 'express';
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import request from 'supertest';
import { jsonInOneWrite } from '../../../shared/http/json-in-one-write.ts';
import { closeServer, listen } from '../../../shared/http/listen.ts';

/** A page-sized body (Express turns bodies of 1,000 characters or more into a Buffer) with non-ASCII text. */
const page = {
  totalPages: 3,
  nextPage: 1700000000000,
  data: Array.from({ length: 10 }, (_, i) => ({
    key: `k${i}`,
    description: `Zoë and Łukasz commented ${i}`,
  })),
};

/** An app answering `body` with `status` at /, with or without jsonInOneWrite. */
function appAnswering(body: unknown, status: number, oneWrite: boolean): Express {
  const app = express();
  app.disable('x-powered-by');
  if (oneWrite) jsonInOneWrite(app);
  app.get('/', (_req, res) => {
    res.status(status).json(body);
  });
  return app;
}

const sent = (res: request.Response) => ({
  status: res.status,
  type: res.headers['content-type'],
  length: res.headers['content-length'],
  etag: res.headers.etag,
  text: res.text,
});

/** The writes the server's socket made for one GET /: [write calls, writev calls]. */
async function socketWrites(app: Express): Promise<[number, number]> {
  const server: Server = await listen(app, { port: 0, host: '127.0.0.1' });
  const counts: [number, number] = [0, 0];
  server.on('connection', (socket: Socket) => {
    // net.Socket's Writable implementation: one call per system call it asks libuv for.
    const writable = socket as Socket & {
      _write: (...args: unknown[]) => void;
      _writev: (...args: unknown[]) => void;
    };
    const write = writable._write.bind(socket);
    const writev = writable._writev.bind(socket);
    writable._write = (...args) => ((counts[0] += 1), write(...args));
    writable._writev = (...args) => ((counts[1] += 1), writev(...args));
  });
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    await res.text();
    return counts;
  } finally {
    await closeServer(server);
  }
}

describe('jsonInOneWrite', () => {
  for (const [name, body, status] of [
    ['a page', page, 200],
    ['a small body', { data: { totalUnreadCount: 3 } }, 200],
    ['an error', { code: 404000, message: 'no route for GET /x' }, 404],
  ] as const) {
    it(`answers ${name} with the status, headers, ETag and body Express's res.json gives`, async () => {
      const stock = await request(appAnswering(body, status, false)).get('/');
      const one = await request(appAnswering(body, status, true)).get('/');
      expect(sent(one)).to.deep.equal(sent(stock));
      expect(one.headers.etag).to.match(/^W\/"/);
    });
  }

  it('answers 304 with no body or Content-Type to a matching If-None-Match, as Express does', async () => {
    const app = appAnswering(page, 200, true);
    const { headers } = await request(app).get('/').expect(200);
    const etag = String(headers.etag);
    const again = await request(app).get('/').set('If-None-Match', etag).expect(304);
    const stock = await request(appAnswering(page, 200, false))
      .get('/')
      .set('If-None-Match', etag)
      .expect(304);
    expect(again.text).to.equal('');
    expect(again.headers['content-type']).to.equal(undefined);
    expect(again.headers.etag).to.equal(stock.headers.etag);
    await request(app).get('/').set('If-None-Match', 'W/"other"').expect(200);
  });

  it('answers HEAD with the same headers and no body', async () => {
    const head = await request(appAnswering(page, 200, true))
      .head('/')
      .expect(200);
    const stock = await request(appAnswering(page, 200, false))
      .head('/')
      .expect(200);
    expect(head.text).to.equal(undefined);
    expect(sent(head)).to.deep.equal(sent(stock));
  });

  it('leaves an answer whose Content-Type is already set to Express', async () => {
    const app = express();
    jsonInOneWrite(app);
    app.get('/', (_req, res) => {
      res.type('application/problem+json').json({ title: 'x' });
    });
    const res = await request(app).get('/').expect(200);
    expect(res.headers['content-type']).to.equal('application/problem+json; charset=utf-8');
    expect(JSON.parse(res.text)).to.deep.equal({ title: 'x' });
  });

  it("writes a page's head and body to the socket in one write, where Express makes a writev of two", async () => {
    expect(await socketWrites(appAnswering(page, 200, true))).to.deep.equal([1, 0]);
    expect(await socketWrites(appAnswering(page, 200, false))).to.deep.equal([0, 1]);
  });
});

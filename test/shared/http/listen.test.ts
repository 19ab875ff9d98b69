import { expect } from 'chai';
import express from 'express';
import { Agent, get as httpGet } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { closeServer, drainGraceMs, listen, ListenError } from '../../../shared/http/listen.ts';
import { continueRequest } from '../../../shared/http/expect-continue.ts';
import { recordingLogger } from '../../support/recording-logger.ts';

describe('listen()', () => {
  it('binds loopback when no host is given, so nothing is reachable from other machines by default', async () => {
    const server = await listen(express(), { port: 0 });
    try {
      expect((server.address() as AddressInfo).address).to.equal('127.0.0.1');
    } finally {
      await closeServer(server);
    }
  });
  it('binds the host it is given', async () => {
    const server = await listen(express(), { port: 0, host: '::1' });
    try {
      expect((server.address() as AddressInfo).address).to.equal('::1');
    } finally {
      await closeServer(server);
    }
  });

  it('refuses a port in use with one line naming the address and the variable that chose it', async () => {
    const first = await listen(express(), { port: 0, host: '::1' });
    try {
      const { port } = first.address() as AddressInfo;
      const refused = listen(express(), { port, host: '::1', portVariable: 'TRAY_PORT' });
      await expect(refused).to.be.rejectedWith(
        ListenError,
        `cannot listen on [::1]:${port}: EADDRINUSE (TRAY_PORT)`,
      );
    } finally {
      await closeServer(first);
    }
  });

  // 192.0.2.1 (TEST-NET-1) is on no interface of this machine; .invalid never resolves.
  for (const [host, code] of [
    ['192.0.2.1', /EADDRNOTAVAIL/],
    ['no-such-host.invalid', /ENOTFOUND|EAI_AGAIN/],
  ] as const) {
    it(`refuses a host it cannot bind (${host}) naming the variable that chose the host, not the port`, async () => {
      const refused = listen(express(), {
        port: 0,
        host,
        portVariable: 'RECEIVER_PORT',
        hostVariable: 'RECEIVER_HOST',
      });
      const error = await refused.then(
        () => expect.fail('listened'),
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(ListenError);
      expect((error as ListenError).code).to.match(code);
      expect((error as ListenError).message).to.match(/\(RECEIVER_HOST\)$/);
    });
  }

  /** Sends `request` as raw bytes (what no HTTP client library would send) and reads the answer. */
  async function rawRequest(port: number, request: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(Buffer.from(request, 'latin1')));
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
      socket.on('end', () => resolve(answer));
      socket.on('error', reject);
    });
  }

  it('answers a request the HTTP parser refuses (a control character in a header) with 400 and the JSON error body', async () => {
    const server = await listen(express(), { port: 0 });
    try {
      const { port } = server.address() as AddressInfo;
      const answer = await rawRequest(port, 'GET / HTTP/1.1\r\nHost: x\r\nCookie: s=\u0001x\r\n\r\n');
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      expect(head.split('\r\n')[0]).to.equal('HTTP/1.1 400 Bad Request');
      expect(head).to.match(/^Content-Type: application\/json$/im);
      expect(JSON.parse(body)).to.deep.equal({
        status: 'error',
        code: 400000,
        message: 'malformed HTTP request',
      });
    } finally {
      await closeServer(server);
    }
  });

  // Node answered these two itself, before any handler, with an empty body: an Expect it does not
  // know (417) and an HTTP/1.1 request without a Host header (400, required since Node 24).
  it('answers an Expect it cannot meet (417) and an HTTP/1.1 request without Host (400) with the JSON error body', async () => {
    const app = express();
    app.post('/', (req, res) => {
      req.resume();
      req.on('end', () => res.json({}));
    });
    const server = await listen(app, { port: 0 });
    try {
      const { port } = server.address() as AddressInfo;
      const cases: [string, string, number, string][] = [
        [
          'POST / HTTP/1.1\r\nHost: x\r\nExpect: foo\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
          'HTTP/1.1 417 Expectation Failed',
          417000,
          'expectation not supported: only 100-continue is',
        ],
        [
          'POST / HTTP/1.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
          'HTTP/1.1 400 Bad Request',
          400000,
          'missing Host header (HTTP/1.1 requires one)',
        ],
      ];
      for (const [request, statusLine, code, message] of cases) {
        const [head = '', body = ''] = (await rawRequest(port, request)).split('\r\n\r\n');
        expect(head.split('\r\n')[0], statusLine).to.equal(statusLine);
        expect(head, statusLine).to.match(/^Content-Type: application\/json$/im);
        expect(JSON.parse(body), statusLine).to.deep.equal({ status: 'error', code, message });
      }
      // With its Host, and with an HTTP/1.0 request (which needs none), the app answers.
      for (const request of [
        'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
        'POST / HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}',
      ])
        expect((await rawRequest(port, request)).split('\r\n')[0]).to.match(/^HTTP\/1\.1 200 OK$/);
    } finally {
      await closeServer(server);
    }
  });

  describe('a request that waits for 100 Continue before sending its body', () => {
    /** A connection that sent `head` (an Expect: 100-continue request's headers) and reads the answers. */
    function waitingClient(port: number, head: string) {
      let answer = '';
      let ended = false;
      const socket = connect(port, '127.0.0.1', () => socket.write(head));
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
      socket.on('end', () => (ended = true));
      const until = async (done: () => boolean) => {
        const deadline = Date.now() + 5_000;
        while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
        return answer;
      };
      return {
        socket,
        answer: (pattern: RegExp) => until(() => pattern.test(answer)),
        end: async () => {
          await until(() => ended);
          return ended;
        },
      };
    }
    const head = (path: string) =>
      `POST ${path} HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n`;
    const app = express();
    // Refused on its head: answered without reading the body.
    app.post('/refuse', (_req, res) => res.status(403).json({}));
    app.post('/read', (req, res) => {
      continueRequest(req, res);
      let length = 0;
      req.on('data', (chunk: Buffer) => (length += chunk.length));
      req.on('end', () => res.json({ length }));
    });

    it('with deferContinue: a request answered on its head gets no 100 Continue, and its connection closes', async () => {
      const server = await listen(app, { port: 0, deferContinue: true });
      try {
        const client = waitingClient((server.address() as AddressInfo).port, head('/refuse'));
        const answer = await client.answer(/\r\n\r\n\{\}$/);
        expect(answer.split('\r\n')[0]).to.equal('HTTP/1.1 403 Forbidden');
        expect(answer).not.to.include('100 Continue');
        expect(answer).to.match(/^Connection: close$/im);
        expect(await client.end(), 'the server ended the connection').to.equal(true);
      } finally {
        await closeServer(server);
      }
    });

    it('with deferContinue: the app that reads the body sends 100 Continue first, and the connection stays open', async () => {
      const server = await listen(app, { port: 0, deferContinue: true });
      try {
        const client = waitingClient((server.address() as AddressInfo).port, head('/read'));
        expect(await client.answer(/\r\n\r\n/)).to.equal('HTTP/1.1 100 Continue\r\n\r\n');
        client.socket.write('{}');
        const answer = await client.answer(/\{"length":2\}$/);
        expect(answer).to.match(/HTTP\/1\.1 200 OK/);
        expect(answer).to.match(/^Connection: keep-alive$/im);
        client.socket.destroy();
      } finally {
        await closeServer(server);
      }
    });

    // Node emits such a request as 'checkContinue', not 'request', where the drain's listener was.
    it('with deferContinue: one arriving while the server drains is told to close too', async () => {
      const server = await listen(app, { port: 0, deferContinue: true });
      const client = waitingClient((server.address() as AddressInfo).port, '');
      // A first request in flight when the drain starts, answered as before it (kept alive); the
      // next one sent on the connection at once, before the drain's sweep finds it idle.
      client.socket.write(head('/read'));
      await client.answer(/^HTTP\/1\.1 100 Continue\r\n\r\n$/);
      const closed = closeServer(server, 3_000);
      client.socket.write('{}');
      await client.answer(/\{"length":2\}$/);
      client.socket.write(head('/read'));
      await client.answer(/\{"length":2\}HTTP\/1\.1 100 Continue\r\n\r\n$/);
      client.socket.write('{}');
      await closed;
      const answers = (await client.answer(/\{"length":2\}$/)).split('HTTP/1.1 200 OK');
      expect(answers[1]).to.match(/^Connection: keep-alive$/im);
      expect(answers[2]).to.match(/^Connection: close$/im);
      expect(await client.end()).to.equal(true);
    });

    it('without it: Node sends 100 Continue before the app sees the request, as ever', async () => {
      const server = await listen(app, { port: 0 });
      try {
        const client = waitingClient((server.address() as AddressInfo).port, head('/refuse'));
        const answer = await client.answer(/\r\n\r\n\{\}$/);
        expect(answer.startsWith('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 403 Forbidden')).to.equal(true);
        client.socket.destroy();
      } finally {
        await closeServer(server);
      }
    });
  });

  // Once listening, Node reports a failed accept (EMFILE: out of file descriptors) as the server's
  // 'error' and goes on listening. The start-up's one-time listener took the first unsaid; with
  // none left, the second was thrown and ended the process.
  it('logs each error of the listener after start-up and goes on answering', async () => {
    const { logger, messages } = recordingLogger();
    const app = express();
    app.get('/', (_req, res) => res.json({}));
    const server = await listen(app, { port: 0, logger });
    try {
      const { port } = server.address() as AddressInfo;
      for (let n = 0; n < 2; n += 1)
        server.emit('error', Object.assign(new Error('accept EMFILE'), { code: 'EMFILE' }));
      expect(messages).to.deep.equal([
        `the listener on 127.0.0.1:${port} failed: EMFILE`,
        `the listener on 127.0.0.1:${port} failed: EMFILE`,
      ]);
      expect((await fetch(`http://127.0.0.1:${port}/`)).status).to.equal(200);
    } finally {
      await closeServer(server);
    }
  });

  // Every error answer has the JSON error shape (docs/contract.md#errors); these three had none.
  it('answers oversized headers (431), oversized chunk extensions (413) and slow headers (408) with the JSON error body', async () => {
    const app = express();
    app.post('/', (req, res) => {
      req.resume();
      req.on('end', () => res.json({}));
    });
    const server = await listen(app, { port: 0 });
    server.headersTimeout = 300;
    server.requestTimeout = 300;
    try {
      const { port } = server.address() as AddressInfo;
      const cases: [string, string, number, string][] = [
        [
          `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
          'HTTP/1.1 431 Request Header Fields Too Large',
          431000,
          'request headers too large',
        ],
        [
          `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;${'e'.repeat(20_000)}\r\nx\r\n0\r\n\r\n`,
          'HTTP/1.1 413 Payload Too Large',
          413000,
          'chunk extensions too large',
        ],
        [
          'GET / HTTP/1.1\r\nHost: x\r\n',
          'HTTP/1.1 408 Request Timeout',
          408000,
          'request took too long to arrive',
        ],
      ];
      for (const [request, statusLine, code, message] of cases) {
        const [head = '', body = ''] = (await rawRequest(port, request)).split('\r\n\r\n');
        expect(head.split('\r\n')[0], statusLine).to.equal(statusLine);
        expect(head, statusLine).to.match(/^Content-Type: application\/json$/im);
        expect(JSON.parse(body), statusLine).to.deep.equal({ status: 'error', code, message });
      }
    } finally {
      await closeServer(server);
    }
  });
});

describe('drainGraceMs()', () => {
  // The grace was half the built-in 8 s deadline whatever SHUTDOWN_DEADLINE_MS said: 4 s of a 25 s
  // deadline, and at 5 s it left the receiver's last spool pass (after its 1.5 s reserve) nothing.
  it('is half the configured deadline, not of the built-in one', () => {
    expect(drainGraceMs(25_000)).to.equal(12_500);
    expect(drainGraceMs(5_000)).to.equal(2_500);
  });

  it('leaves time, at the least deadline accepted (5 s), for the receiver to close after a 1.5 s reserve', () => {
    expect(5_000 - drainGraceMs(5_000) - 1_500).to.be.above(0);
  });
});

describe('closeServer()', () => {
  /** Drains a server whose one request takes `answerMs`, with the grace of `deadlineMs`. */
  const drainWith = async (deadlineMs: number, answerMs: number) => {
    let arrived: () => void = () => undefined;
    const inFlight = new Promise<void>((resolve) => (arrived = resolve));
    const app = express();
    app.get('/', (_req, res) => {
      arrived();
      setTimeout(() => res.json({ ok: true }), answerMs);
    });
    const server = await listen(app, { port: 0 });
    const { port } = server.address() as AddressInfo;
    const answered = new Promise<number | Error>((resolve) => {
      httpGet({ port, host: '127.0.0.1', path: '/' }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      }).on('error', resolve);
    });
    await inFlight;
    const cut: number[] = [];
    await closeServer(server, drainGraceMs(deadlineMs), (connections) => cut.push(connections));
    return { answer: await answered, cut };
  };

  // Scaled down: a request answered after 400 ms stands for one longer than the built-in 4 s.
  it("waits for a request longer than a shorter deadline's grace when the configured deadline gives it longer", async () => {
    expect(await drainWith(1_200, 400), 'a grace of 600 ms').to.deep.equal({ answer: 200, cut: [] });
    const short = await drainWith(400, 400);
    expect(short.cut, 'a grace of 200 ms').to.deep.equal([1]);
    expect(short.answer).to.be.instanceOf(Error);
  });

  // A request still unanswered when the grace ends has its connection closed, the client a reset:
  // the shutdown said nothing of it, so an operator could not tell a clean drain from one that cut.
  it('closes a connection whose request outlives the grace, and says how many it cut', async () => {
    let arrived: () => void = () => undefined;
    const inFlight = new Promise<void>((resolve) => (arrived = resolve));
    const app = express();
    app.get('/', () => arrived());
    const server = await listen(app, { port: 0 });
    const { port } = server.address() as AddressInfo;
    const failed = new Promise<Error>((resolve) => {
      httpGet({ port, host: '127.0.0.1', path: '/' }, () => undefined).on('error', resolve);
    });
    await inFlight;
    const cut: number[] = [];
    await closeServer(server, 200, (connections) => cut.push(connections));
    expect(cut).to.deep.equal([1]);
    expect((await failed).message).to.match(/socket hang up|ECONNRESET/);
  });

  // Node keeps serving a kept-alive connection after close(): behind a balancer that reuses its
  // connections the drain never ended early, and what was in flight when the grace ran out was
  // reset (a 502 at every rolling restart).
  it('tells kept-alive clients to close and ends the drain once their requests are answered', async () => {
    let closing = false;
    let handled = 0;
    let answered = 0;
    const afterClose: (string | number | string[] | undefined)[] = [];
    const app = express();
    app.get('/', (_req, res) => {
      handled += 1;
      const arrivedClosing = closing;
      res.on('finish', () => {
        answered += 1;
        if (arrivedClosing) afterClose.push(res.getHeader('connection'));
      });
      setTimeout(() => res.json({}), 20);
    });
    const server = await listen(app, { port: 0 });
    const { port } = server.address() as AddressInfo;
    const agent = new Agent({ keepAlive: true, maxSockets: 2 });
    const get = () =>
      new Promise<void>((resolve, reject) => {
        httpGet({ port, host: '127.0.0.1', path: '/', agent }, (res) => {
          res.resume();
          res.on('end', () => resolve());
        }).on('error', reject);
      });
    // A balancer's traffic: requests one after another on the same two connections, all along.
    let sending = true;
    const traffic = Promise.all(
      [0, 1].map(async () => {
        while (sending) await get().catch(() => undefined);
      }),
    );
    try {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const started = Date.now();
      closing = true;
      let cut = 0;
      await closeServer(server, 3_000, (connections) => (cut = connections));
      const tookMs = Date.now() - started;
      expect(cut, 'connections cut').to.equal(0);
      sending = false;
      await traffic;
      expect(tookMs, 'the drain, against a grace of 3 s').to.be.below(1_500);
      // Every request the app took was answered (none reset in flight), and each that arrived
      // once the shutdown began was told to close its connection.
      expect(answered).to.equal(handled);
      expect(
        afterClose.every((value) => value === 'close'),
        JSON.stringify(afterClose),
      ).to.equal(true);
    } finally {
      sending = false;
      agent.destroy();
      server.closeAllConnections();
    }
  });
});

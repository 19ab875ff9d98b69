import { expect } from 'chai';
import { connect, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { dedupeKey } from '../../../receiver/dedupe-key.ts';
import { channelDidCreate, sign, signedHeaders } from '../../receiver/support/signed-request.ts';
import {
  queuedJob,
  queueFootprint,
  useListeningReceiver,
  type ListeningReceiver,
} from '../support/listening-receiver.ts';
import { rawRequest, requestHead } from '../support/raw-http.ts';

// What test/receiver/** already covers is not repeated here (RELIABILITY.md, "Hostile input"):
// single bad headers, oversized and chunked bodies at the limit, nesting past 32, spoofed
// X-Forwarded-For without TRUST_PROXY, leading zeros and single-number addresses, slowloris headers.

let counter = 0;
const freshBody = (tag: string) => channelDidCreate(`hostile-${tag}-${(counter += 1)}`);

/** Runs `act` and checks the queue and the dedupe marks did not change. */
async function expectNothingQueued(listening: () => ListeningReceiver, act: () => Promise<void>) {
  const before = await queueFootprint(listening().receiver);
  await act();
  expect(await queueFootprint(listening().receiver)).to.deep.equal(before);
}

describe('POST /webhooks with hostile requests', function () {
  this.timeout(30_000);

  describe('with duplicated headers', () => {
    const listening = useListeningReceiver();
    const send = (headers: [string, string][], body: string) =>
      rawRequest(
        listening().port,
        requestHead('/webhooks', [
          ...headers,
          ['Content-Length', String(Buffer.byteLength(body))],
          ['Connection', 'close'],
        ]) + body,
      );

    it('responds 401 to two x-service-signature headers, even when one is valid, and queues nothing', async () => {
      const body = freshBody('two-signatures');
      for (const pair of [
        [sign(body), sign(body)],
        [sign(body), sign('other')],
        [sign('other'), sign(body)],
      ]) {
        await expectNothingQueued(listening, async () => {
          const res = await send(
            [
              ['Content-Type', 'application/json'],
              ['X-Service-Signature', pair[0]!],
              ['X-Service-Signature', pair[1]!],
            ],
            body,
          );
          expect(res.status).to.equal(401);
        });
      }
    });

    it('responds 415 to two Content-Type headers, whichever comes first, and queues nothing', async () => {
      const body = freshBody('two-content-types');
      for (const pair of [
        ['application/json', 'text/plain'],
        ['text/plain', 'application/json'],
        ['application/json', 'application/json'],
      ]) {
        await expectNothingQueued(listening, async () => {
          const res = await send(
            [
              ['Content-Type', pair[0]!],
              ['Content-Type', pair[1]!],
              ['X-Service-Signature', sign(body)],
            ],
            body,
          );
          expect(res.status).to.equal(415);
        });
      }
    });

    it('answers 400 to conflicting Content-Length headers or Content-Length with chunked (request smuggling)', async () => {
      const body = freshBody('smuggle');
      const smuggled = `${requestHead('/webhooks', Object.entries(signedHeaders(body)))}${body}`;
      for (const headers of [
        [
          ['Content-Length', String(Buffer.byteLength(body))],
          ['Content-Length', '5'],
        ],
        [
          ['Content-Length', '5'],
          ['Transfer-Encoding', 'chunked'],
        ],
        [['Transfer-Encoding', 'chunked, identity']],
        [['Content-Length', '-1']],
      ] as [string, string][][]) {
        await expectNothingQueued(listening, async () => {
          const res = await rawRequest(
            listening().port,
            requestHead('/webhooks', [...Object.entries(signedHeaders(body)), ...headers]) +
              `0\r\n\r\n${smuggled}`,
          );
          expect(res.status).to.equal(400);
          // Only one answer: the request hidden behind the first never reached the app.
          expect(res.text.match(/HTTP\/1\.1 /g)).to.have.lengthOf(1);
        });
      }
    });

    it('answers 400 to a chunked body with a malformed chunk size and queues nothing', async () => {
      const body = freshBody('bad-chunk');
      await expectNothingQueued(listening, async () => {
        const res = await rawRequest(
          listening().port,
          requestHead('/webhooks', [
            ...Object.entries(signedHeaders(body)),
            ['Transfer-Encoding', 'chunked'],
            ['Connection', 'close'],
          ]) + `zz\r\n${body}\r\n0\r\n\r\n`,
        );
        expect(res.status).to.equal(400);
      });
    });

    it('answers a signed body split into 1-byte chunks with 200 and queues it once', async () => {
      const body = freshBody('tiny-chunks');
      const chunked = [...Buffer.from(body)].map((byte) => `1\r\n${String.fromCharCode(byte)}\r\n`).join('');
      const res = await rawRequest(
        listening().port,
        requestHead('/webhooks', [
          ...Object.entries(signedHeaders(body)),
          ['Transfer-Encoding', 'chunked'],
          ['Connection', 'close'],
        ]) + `${chunked}0\r\n\r\n`,
      );
      expect(res.status).to.equal(200);
      expect((await queueFootprint(listening().receiver)).jobs).to.include(dedupeKey(Buffer.from(body)));
    });

    // Node's parser takes a transfer coding before `chunked` and undoes only the chunking: the
    // compressed bytes reached the signature check, and the answer was a 401 that pointed at the
    // secret instead of the 415 a Content-Encoding gets.
    it('responds 415 to a transfer coding other than chunked (gzip, chunked) and queues nothing', async () => {
      const body = freshBody('gzip-transfer');
      const zipped = gzipSync(body);
      await expectNothingQueued(listening, async () => {
        const res = await rawRequest(
          listening().port,
          Buffer.concat([
            Buffer.from(
              requestHead('/webhooks', [
                ...Object.entries(signedHeaders(body)),
                ['Transfer-Encoding', 'gzip, chunked'],
                ['Connection', 'close'],
              ]) + `${zipped.length.toString(16)}\r\n`,
            ),
            zipped,
            Buffer.from('\r\n0\r\n\r\n'),
          ]),
        );
        expect(res.status).to.equal(415);
        expect(res.text).to.include('"code":415000');
      });
    });
  });

  describe('with a Content-Length shorter than the body sent', () => {
    const listening = useListeningReceiver();
    it('answers 401 or 400, never 5xx, and queues nothing', async () => {
      // The declared bytes fail the signature (401); the rest is parsed as a second request, and
      // Node answers that parse error with 400 and closes the socket, often before the 401 is out.
      const body = freshBody('short-length');
      await expectNothingQueued(listening, async () => {
        const res = await rawRequest(
          listening().port,
          requestHead('/webhooks', [
            ...Object.entries(signedHeaders(body)),
            ['Content-Length', String(Buffer.byteLength(body) - 10)],
          ]) + body,
          3_000,
        );
        expect(res.status).to.be.oneOf([400, 401]);
        expect(res.text).not.to.match(/HTTP\/1\.1 (200|5\d\d)/);
      });
    });
  });

  describe('with X-Forwarded-For sent twice and TRUST_PROXY=loopback', () => {
    // Node joins repeated X-Forwarded-For lines in order; the proxy's line is the last one.
    const frankfurt = '3.127.106.141';
    const listening = useListeningReceiver({ allow: frankfurt, trustProxy: 'loopback' });
    const send = (lines: string[]) => {
      const body = freshBody('xff-twice');
      return rawRequest(
        listening().port,
        requestHead('/webhooks', [
          ...Object.entries(signedHeaders(body)),
          ...lines.map((line) => ['X-Forwarded-For', line] as [string, string]),
          ['Content-Length', String(Buffer.byteLength(body))],
          ['Connection', 'close'],
        ]) + body,
      );
    };

    it('uses the last line (the proxy appended it) and accepts an allowed address there', async () => {
      expect((await send(['9.9.9.9', frankfurt])).status).to.equal(200);
    });

    it('refuses an allowed address a client put in an earlier line', async () => {
      await expectNothingQueued(listening, async () => {
        expect((await send([frankfurt, '9.9.9.9'])).status).to.equal(403);
      });
    });
  });

  describe('with non-canonical addresses in X-Forwarded-For (TRUST_PROXY=loopback)', () => {
    // 010.0.0.1 is 8.0.0.1 and 2130706433 is 127.0.0.1 to inet_aton; both are allowed here, so
    // only a parser that reads such forms would let these through.
    const listening = useListeningReceiver({ allow: '8.0.0.1,127.0.0.1', trustProxy: 'loopback' });
    const send = (forwardedFor: string) => {
      const body = freshBody('non-canonical');
      return rawRequest(
        listening().port,
        requestHead('/webhooks', [
          ...Object.entries(signedHeaders(body)),
          ['X-Forwarded-For', forwardedFor],
          ['Content-Length', String(Buffer.byteLength(body))],
          ['Connection', 'close'],
        ]) + body,
      );
    };
    for (const address of [
      '8.0.0.1',
      '127.0.0.1',
      '::ffff:8.0.0.1',
      '::ffff:7f00:1',
      '0:0:0:0:0:ffff:127.0.0.1',
    ]) {
      it(`accepts the canonical or IPv4-mapped form ${address}`, async () => {
        expect((await send(address)).status).to.equal(200);
      });
    }
    for (const address of [
      '010.0.0.1',
      '2130706433',
      '0x7f000001',
      '0177.0.0.1',
      '127.1',
      '8.0.0.1.',
      '[::ffff:127.0.0.1]',
      '::ffff:010.0.0.1',
      '127.0.0.1%lo',
      ' ',
    ]) {
      it(`refuses ${JSON.stringify(address)} with 403 and queues nothing`, async () => {
        await expectNothingQueued(listening, async () => {
          expect((await send(address)).status).to.equal(403);
        });
      });
    }
  });

  describe('with a signed body of __proto__ and constructor keys', () => {
    const listening = useListeningReceiver();
    it('queues them as plain data and pollutes no prototype', async () => {
      const body = JSON.stringify({
        event: 'post.didCreate',
        data: { marker: `proto-${Date.now()}` },
      }).replace(
        '"marker"',
        '"__proto__":{"polluted":"yes","isAdmin":true},' +
          '"constructor":{"prototype":{"polluted":"yes"}},' +
          '"nested":{"__proto__":{"polluted":"yes"}},"marker"',
      );
      const res = await rawRequest(
        listening().port,
        requestHead('/webhooks', [
          ...Object.entries(signedHeaders(body)),
          ['Content-Length', String(Buffer.byteLength(body))],
          ['Connection', 'close'],
        ]) + body,
      );
      expect(res.status).to.equal(200);
      const job = await queuedJob(listening().receiver, dedupeKey(Buffer.from(body)));
      expect(job, 'queued job').to.not.equal(null);
      const data = job!.data.data;
      expect(Object.hasOwn(data, '__proto__'), 'own __proto__ key').to.equal(true);
      expect(JSON.stringify(data)).to.equal(JSON.stringify((JSON.parse(body) as { data: unknown }).data));
      expect(Object.getPrototypeOf(data)).to.equal(Object.prototype);
      expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
      expect(({} as Record<string, unknown>).isAdmin).to.equal(undefined);
    });
  });

  describe('with a signed 1 MiB body of nothing but brackets', () => {
    const listening = useListeningReceiver();
    it('responds 400 without parsing it and stays available', async () => {
      const body = '['.repeat(1024 * 1024 - 1);
      await expectNothingQueued(listening, async () => {
        const res = await rawRequest(
          listening().port,
          requestHead('/webhooks', [
            ...Object.entries(signedHeaders(body)),
            ['Content-Length', String(body.length)],
            ['Connection', 'close'],
          ]) + body,
        );
        expect(res.status).to.equal(400);
      });
      const ok = freshBody('after-brackets');
      const res = await fetch(`http://127.0.0.1:${listening().port}/webhooks`, {
        method: 'POST',
        headers: signedHeaders(ok),
        body: ok,
      });
      expect(res.status).to.equal(200);
    });
  });

  describe('with many slow clients holding connections open (headers 3 s, request 5 s limits)', () => {
    const listening = useListeningReceiver({ headersTimeoutMs: 3_000, requestTimeoutMs: 5_000 });
    it('still answers a valid delivery 200 while they hold on, cuts every slow client off and queues none of them', async () => {
      const sockets: Socket[] = [];
      const closed: Promise<void>[] = [];
      let firstCut: number | undefined;
      const slowBodies: string[] = [];
      const dribbles: string[] = [];
      const connectedAt = performance.now();
      for (let n = 0; n < 40; n += 1) {
        const socket = connect({ port: listening().port, host: '127.0.0.1' });
        sockets.push(socket);
        socket.on('error', () => undefined);
        closed.push(
          new Promise((resolve) =>
            socket.once('close', () => {
              firstCut ??= performance.now();
              resolve();
            }),
          ),
        );
        const body = freshBody('slow');
        slowBodies.push(body);
        const head = requestHead('/webhooks', [
          ...Object.entries(signedHeaders(body)),
          ['Content-Length', String(Buffer.byteLength(body))],
        ]);
        // Half dribble a header's value, half send headers and then the body, a byte at a time: bytes
        // that stay valid, so only the limits end them (a space where the request line's version
        // begins was a parse error, answered 400 at once).
        const initial =
          n % 2 === 0 ? head.slice(0, head.indexOf('\r\n') + 2) + 'X-Slow: ' : head + body.slice(0, 1);
        dribbles.push(n % 2 === 0 ? 'a' : ' ');
        socket.write(initial);
      }
      const timer = setInterval(() => {
        sockets.forEach((socket, n) => {
          if (!socket.destroyed) socket.write(dribbles[n]!);
        });
      }, 200);
      try {
        const ok = freshBody('during-slow');
        const started = performance.now();
        const res = await fetch(`http://127.0.0.1:${listening().port}/webhooks`, {
          method: 'POST',
          headers: signedHeaders(ok),
          body: ok,
        });
        expect(res.status).to.equal(200);
        // Answered while every slow client still held its connection: a server they block answers
        // only once its limits cut them off, seconds later. Timed against that, not against the
        // clock, which a loaded machine's scheduling adds to.
        const answeredAt = performance.now();
        expect(firstCut, 'a slow client cut off before the answer').to.equal(undefined);
        expect(answeredAt - started, 'answer time in ms').to.be.below(3_000);
        // Bounded: the server's limits (5 s + a 1 s sweep) must close them long before mocha's timeout.
        // None before the headers limit: each is cut by a limit, not refused for what it sent.
        await Promise.all(closed);
        expect(firstCut! - connectedAt, 'ms to the first cut').to.be.at.least(3_000 - 100);
      } finally {
        clearInterval(timer);
        for (const socket of sockets) socket.destroy();
      }
      const { jobs } = await queueFootprint(listening().receiver);
      for (const body of slowBodies) expect(jobs).not.to.include(dedupeKey(Buffer.from(body)));
    });
  });
});

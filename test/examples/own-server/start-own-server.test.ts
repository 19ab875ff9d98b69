import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { connect, createServer, type AddressInfo } from 'node:net';
import {
  startOwnServer,
  type RunningOwnServer,
  type VerifiedEvent,
} from '../../../examples/own-server/start-own-server.ts';
import { freePort } from '../../../scripts/lib/local-servers.ts';
import { messageKey } from '../../../receiver/message-key.ts';
import { loadReceiverConfig } from '../../../receiver/receiver-config.ts';
import {
  channelDidCreate,
  signedHeaders,
  standardEvent,
  standardHeaders,
  testSecret,
  testStandardSecret,
} from '../../receiver/support/signed-request.ts';
import { startTestReceiver, type TestReceiver } from '../../receiver/support/use-receiver.ts';
import { closeServer, listen } from '../../../shared/http/listen.ts';
import { cleanEnv, runScript, startScript } from '../../support/run-script.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { waitFor } from '../../support/wait-for.ts';

const variables = {
  WEBHOOK_SECRETS: `eu=${testSecret},billing=${testStandardSecret}`,
  WEBHOOK_SIGNATURE_SCHEME: 'billing=standard-webhooks',
};

describe('the own-server example (examples/own-server): the verification core in a plain node:http server', () => {
  let server: RunningOwnServer | undefined;
  let seen: VerifiedEvent[] = [];
  let failing = false;
  let failures: { error: Error; event: VerifiedEvent }[] = [];
  beforeEach(async () => {
    seen = [];
    failing = false;
    failures = [];
    server = await startOwnServer(
      {
        secrets: loadReceiverConfig(variables).WEBHOOK_SECRETS,
        port: 0,
        onFailed: (failure) => failures.push(failure),
      },
      (event) => {
        if (failing) throw new Error('downstream unavailable');
        seen.push(event);
      },
    );
  });
  afterEach(async () => {
    await server?.close();
  });

  const post = (body: string, headers: Record<string, string>) =>
    fetch(`http://127.0.0.1:${server?.port}/webhooks`, { method: 'POST', headers, body });

  it('hands on a platform delivery with its webhook, scheme, event, data and the body’s SHA-256 as key; answers 200 {}', async () => {
    const body = channelDidCreate('own-server-1');
    const res = await post(body, signedHeaders(body));
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal({});
    expect(seen).to.deep.equal([
      {
        webhook: 'eu',
        scheme: 'platform',
        event: 'channel.didCreate',
        data: JSON.parse(body).data,
        key: createHash('sha256').update(body).digest('hex'),
      },
    ]);
  });

  it('hands on a Standard Webhooks delivery keyed by its webhook-id, with the whole payload as data', async () => {
    const body = standardEvent('own-server-2');
    expect((await post(body, standardHeaders(body, { id: 'msg_own_2' }))).status).to.equal(200);
    expect(seen).to.deep.equal([
      {
        webhook: 'billing',
        scheme: 'standard-webhooks',
        event: 'invoice.paid',
        data: JSON.parse(body),
        key: messageKey('billing', 'msg_own_2'),
      },
    ]);
  });

  it('refuses a stale Standard Webhooks delivery with the receiver’s 401 JSON error, and hands on nothing', async () => {
    const body = standardEvent('own-server-3');
    const res = await post(body, standardHeaders(body, { timestamp: Math.floor(Date.now() / 1000) - 600 }));
    expect(res.status).to.equal(401);
    expect(await res.json()).to.deep.equal({
      status: 'error',
      code: 401000,
      message: 'webhook-timestamp is more than 300 s in the past',
    });
    expect(seen).to.deep.equal([]);
  });

  it('refuses a signed body that is not the envelope with 400', async () => {
    const body = '{"event":"x"}';
    const res = await post(body, signedHeaders(body));
    expect(res.status).to.equal(400);
    expect(((await res.json()) as { message: string }).message).to.equal('"data" must be a JSON object');
  });

  it('answers 503 when your function throws, so the sender delivers again, and tells onFailed why', async () => {
    failing = true;
    const body = channelDidCreate('own-server-5');
    expect((await post(body, signedHeaders(body))).status).to.equal(503);
    expect(failures.map(({ error }) => error.message)).to.deep.equal(['downstream unavailable']);
    expect(failures[0]?.event).to.include({ webhook: 'eu', event: 'channel.didCreate' });
    expect(failures[0]?.event.key).to.equal(createHash('sha256').update(body).digest('hex'));
  });

  // The receiver's path is matched by Express: a trailing slash, another case and a query string
  // reach the same handler. The example answered 404 for `/webhooks/?a=1`, which the receiver takes.
  it('cuts a client whose headers do not end within 5 s, as the receiver does (Node’s default waits 60 s)', async function () {
    this.timeout(15_000);
    const socket = connect(server!.port, '127.0.0.1');
    const started = performance.now();
    socket.write('POST /webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const waited = performance.now() - started;
    expect(waited).to.be.within(4_900, 7_500);
    expect(answer).to.match(/^HTTP\/1\.1 408 /);
  });

  // Node's parser answered these with a bare 400 and no body; the receiver answers its JSON error.
  it('answers a request the HTTP parser refuses with 400 and the JSON error body, as the receiver does', async () => {
    const socket = connect(server!.port, '127.0.0.1');
    socket.write('POST /webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Bad: a\u0001b\r\n\r\n');
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    expect(head.split('\r\n')[0]).to.equal('HTTP/1.1 400 Bad Request');
    expect(JSON.parse(body)).to.deep.equal({
      status: 'error',
      code: 400000,
      message: 'malformed HTTP request',
    });
  });

  it('invites a body sent on 100-continue only once the head passed, as the receiver does', async () => {
    /** The bytes answered to `headers` (each a `name: value` line) sent with Expect: 100-continue. */
    const exchange = (body: string, headers: Record<string, string>) =>
      new Promise<{ answer: string; closed: boolean }>((resolve) => {
        const socket = connect(server!.port, '127.0.0.1');
        const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
        socket.write(
          `POST /webhooks HTTP/1.1\r\nHost: x\r\n${lines.join('')}` +
            `Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`,
        );
        let answer = '';
        socket.on('data', (chunk: Buffer) => {
          answer += chunk.toString();
          if (answer === 'HTTP/1.1 100 Continue\r\n\r\n') socket.write(body);
          // Its answers are chunked: the last chunk ends them.
          else if (answer.endsWith('\r\n0\r\n\r\n'))
            setTimeout(() => {
              resolve({ answer, closed: socket.readableEnded });
              socket.destroy();
            }, 200);
        });
      });
    const body = channelDidCreate('own-continue');
    const accepted = await exchange(body, signedHeaders(body));
    expect(accepted.answer).to.match(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
    expect(seen.map((event) => event.key)).to.have.lengthOf(1);
    // A legacy duplicate is decided on its head: acknowledged without its body, then closed.
    const legacy = await exchange(body, { ...signedHeaders(body), 'x-legacy-signature': 'x' });
    expect(legacy.answer).to.match(/^HTTP\/1\.1 200 OK\r\n/);
    expect(legacy.answer).not.to.include('100 Continue');
    expect(legacy.closed, 'closed').to.equal(true);
  });

  describe('the webhook path, matched as the receiver matches it', () => {
    const prefix = useQueuePrefix();
    let receiver: TestReceiver;
    let receiverServer: Server;
    before(async () => {
      receiver = await startTestReceiver(prefix);
      receiverServer = await listen(receiver.app, { port: 0 });
    });
    after(async () => {
      if (receiverServer) await closeServer(receiverServer, 1_000);
      await receiver?.close();
      rmSync(receiver.spoolDir, { recursive: true, force: true });
    });

    const paths = [
      '/webhooks',
      '/webhooks/',
      '/webhooks?a=1',
      '/webhooks/?a=1',
      '/WEBHOOKS',
      '/Webhooks/?x',
      '/webhooks//',
      '/webhooks/x',
      '/webhook',
      '/webhooksx',
      '/%77ebhooks',
      '//webhooks',
      '/',
    ];
    for (const path of paths) {
      it(`POST ${path}: the receiver's status`, async () => {
        const body = channelDidCreate(`own-server-path-${path}`);
        const at = (port: number) =>
          fetch(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: signedHeaders(body), body });
        const receiverPort = (receiverServer.address() as AddressInfo).port;
        const expected = (await at(receiverPort)).status;
        expect((await at(server!.port)).status).to.equal(expected);
      });
    }

    it('GET /webhooks/?a=1: 405, as the receiver', async () => {
      const res = await fetch(`http://127.0.0.1:${server?.port}/webhooks/?a=1`);
      expect(res.status).to.equal(405);
    });
  });

  // docs/receiver.md says the example answers as the receiver does: the same requests to both, with
  // a WEBHOOK_PATH that ends in a slash, get the same status, body and Allow header.
  describe('every answer, compared with the receiver’s (WEBHOOK_PATH=/webhooks/)', () => {
    const prefix = useQueuePrefix();
    let receiver: TestReceiver;
    let receiverServer: Server;
    let own: RunningOwnServer;
    const handed: string[] = [];
    before(async () => {
      receiver = await startTestReceiver(prefix, {
        allow: 'off',
        secrets: variables.WEBHOOK_SECRETS,
        schemes: variables.WEBHOOK_SIGNATURE_SCHEME,
        webhookPath: '/webhooks/',
      });
      receiverServer = await listen(receiver.app, { port: 0 });
      own = await startOwnServer(
        { secrets: loadReceiverConfig(variables).WEBHOOK_SECRETS, port: 0, path: '/webhooks/' },
        (event) => void handed.push(event.key),
      );
    });
    after(async () => {
      await own?.close();
      if (receiverServer) await closeServer(receiverServer, 1_000);
      await receiver?.close();
      rmSync(receiver.spoolDir, { recursive: true, force: true });
    });

    const signed = (id: string, change: Record<string, string> = {}) => {
      const body = channelDidCreate(`compare-${id}`);
      return { body, headers: { ...signedHeaders(body), ...change } };
    };
    const legacyBody = channelDidCreate('compare-legacy-signed');
    const cases: {
      name: string;
      method?: string;
      path?: string;
      body?: string;
      headers?: Record<string, string>;
    }[] = [
      { name: 'a valid delivery', ...signed('valid') },
      { name: 'the path without its trailing slash', path: '/webhooks', ...signed('no-slash') },
      { name: 'the path with two trailing slashes', path: '/webhooks//', ...signed('two-slashes') },
      { name: 'the path in another case, with a query', path: '/WEBHOOKS/?a=1', ...signed('case') },
      { name: 'another path', path: '/webhooks/x', ...signed('other') },
      { name: 'Content-Type text/plain', ...signed('text', { 'content-type': 'text/plain' }) },
      { name: 'Content-Encoding gzip', ...signed('gzip', { 'content-encoding': 'gzip' }) },
      {
        name: 'a legacy duplicate without a signature',
        body: channelDidCreate('compare-legacy'),
        headers: { 'content-type': 'application/json', 'x-legacy-signature': 'x' },
      },
      {
        name: 'a legacy duplicate with a valid signature',
        body: legacyBody,
        headers: { ...signedHeaders(legacyBody), 'x-legacy-signature': 'x' },
      },
      { name: 'a wrong signature', ...signed('bad', { 'x-service-signature': 'bm90IGl0' }) },
      {
        name: 'no signature',
        body: channelDidCreate('compare-none'),
        headers: { 'content-type': 'application/json' },
      },
      {
        name: 'a signed body that is not the envelope',
        body: '{"event":"x"}',
        headers: signedHeaders('{"event":"x"}'),
      },
      { name: 'a body over the size limit', ...signed('large'), body: `{"a":"${'x'.repeat(1024 * 1024)}"}` },
      { name: 'GET', method: 'GET' },
      { name: 'PUT', method: 'PUT', ...signed('put') },
    ];
    for (const request of cases) {
      it(`${request.name}: the receiver’s answer`, async () => {
        const at = async (port: number) => {
          const res = await fetch(`http://127.0.0.1:${port}${request.path ?? '/webhooks/'}`, {
            method: request.method ?? 'POST',
            ...(request.headers ? { headers: request.headers } : {}),
            ...(request.body === undefined ? {} : { body: request.body }),
          });
          return { status: res.status, allow: res.headers.get('allow'), body: await res.text() };
        };
        const expected = await at((receiverServer.address() as AddressInfo).port);
        expect(await at(own.port)).to.deep.equal(expected);
      });
    }

    it('hands on no legacy duplicate, signed or not, as the receiver queues none', () => {
      expect(handed).not.to.include(createHash('sha256').update(legacyBody).digest('hex'));
    });
  });

  describe('run as a program (npm run example:own-server)', () => {
    it('reads the receiver’s variables and prints one line per event', async () => {
      const port = await freePort();
      const { child, output } = await startScript(
        'examples/own-server/main.ts',
        cleanEnv({ ...variables, RECEIVER_PORT: String(port), WEBHOOK_ALLOWLIST: 'off' }),
        /listening on/,
      );
      try {
        // A URL to paste, not `listening on <port>/webhooks`; the warning the receiver gives too.
        // (Its two lines come on two pipes: their order is not the test's.)
        expect(output().split('\n').sort()).to.deep.equal([
          '',
          'WEBHOOK_ALLOWLIST=off: webhooks are accepted from any address (local development only)',
          `listening on http://127.0.0.1:${port}/webhooks`,
        ]);
        const body = standardEvent('own-server-program');
        const res = await fetch(`http://127.0.0.1:${port}/webhooks`, {
          method: 'POST',
          headers: standardHeaders(body, { id: 'msg_program' }),
          body,
        });
        expect(res.status).to.equal(200);
        await waitFor(
          () => output().includes(`billing invoice.paid ${messageKey('billing', 'msg_program')}`),
          10_000,
          'the line',
        );
      } finally {
        child.kill('SIGTERM');
      }
    });

    it('checks the source address as the receiver does: a delivery from loopback is refused unless WEBHOOK_ALLOWLIST=off', async () => {
      const port = await freePort();
      const { child } = await startScript(
        'examples/own-server/main.ts',
        cleanEnv({ ...variables, RECEIVER_PORT: String(port) }),
        /listening on/,
      );
      try {
        const body = standardEvent('own-server-allowlist');
        const res = await fetch(`http://127.0.0.1:${port}/webhooks`, {
          method: 'POST',
          headers: standardHeaders(body, { id: 'msg_allowlist' }),
          body,
        });
        expect(res.status).to.equal(403);
        expect(await res.json()).to.include({ status: 'error' });
      } finally {
        child.kill('SIGTERM');
      }
    });

    // Its own default, beside npm start's receiver on 8080 rather than on it.
    it('without RECEIVER_PORT: listens on 8090', async () => {
      const program = await new Promise<{ code: number | null; output: string }>((resolve) => {
        void startScript('examples/own-server/main.ts', cleanEnv(variables), /listening on/).then(
          ({ child, output }) => {
            child.kill('SIGTERM');
            resolve({ code: 0, output: output() });
          },
          (error: Error) => resolve({ code: 1, output: error.message }),
        );
      });
      // 8090 may be another program's on this machine: then the refusal names it.
      expect(program.output).to.match(
        /listening on http:\/\/127\.0\.0\.1:8090\/webhooks\n|cannot listen on 127\.0\.0\.1:8090: EADDRINUSE/,
      );
    });

    it('with RECEIVER_HOST not an address of this machine: one line naming it, exit 1', async () => {
      const port = await freePort();
      const result = await runScript(
        'examples/own-server/main.ts',
        [],
        cleanEnv({ ...variables, RECEIVER_PORT: String(port), RECEIVER_HOST: '192.0.2.1' }),
      );
      expect(result.code).to.equal(1);
      expect(result.stderr).to.equal(`cannot listen on 192.0.2.1:${port}: EADDRNOTAVAIL (RECEIVER_HOST)\n`);
    });

    it('with RECEIVER_PORT in use: one line naming the address and the variable, exit 1', async () => {
      const port = await freePort();
      const occupied = createServer();
      await new Promise<void>((resolve) => occupied.listen(port, '127.0.0.1', resolve));
      try {
        const result = await runScript(
          'examples/own-server/main.ts',
          [],
          cleanEnv({ ...variables, RECEIVER_PORT: String(port) }),
        );
        expect(result.code).to.equal(1);
        expect(result.stderr).to.equal(`cannot listen on 127.0.0.1:${port}: EADDRINUSE (RECEIVER_PORT)\n`);
      } finally {
        await new Promise((resolve) => occupied.close(resolve));
      }
    });
  });
});

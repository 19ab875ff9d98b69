import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../../scripts/lib/local-servers.ts';
import { useOccupiedPort } from '../support/use-occupied-port.ts';
import { cleanEnv, repoRoot, runScript, startCommand, startScript } from '../support/run-script.ts';
import { foreignWritableFolder, unprivileged } from '../support/unprivileged.ts';
import { useQueuePrefix } from '../support/suite-resources.ts';
import { accepts, externalAddress } from '../support/external-address.ts';
import { testStack } from '../support/test-stack.ts';
import { channelDidCreate, sign, standardEvent, testStandardSecret } from './support/signed-request.ts';

const secret = 'main-test-secret-value';

async function waitForOutput(output: () => string, pattern: RegExp): Promise<void> {
  while (!pattern.test(output())) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('receiver/main.ts', function () {
  this.timeout(30_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'receiver-main-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** Starts main.ts on a free port with one webhook (eu) and `extra` variables; resolves once it listens. */
  const start = async (extra: NodeJS.ProcessEnv) => {
    const port = await freePort();
    const started = await startScript(
      'receiver/main.ts',
      cleanEnv({
        REDIS_URL: testStack().redisUrl,
        QUEUE_PREFIX: useQueuePrefix(),
        RECEIVER_PORT: String(port),
        WEBHOOK_SECRETS: `eu=${secret}`,
        SPOOL_DIR: join(dir, `spool-${port}`),
        ...extra,
      }),
      /receiver listening/,
    );
    return { port, ...started };
  };
  const stop = async (child: ChildProcess) => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };

  describe('with a non-canonical address in WEBHOOK_ALLOW_CIDRS', () => {
    it('stops start-up with one line naming the variable and the entry', async () => {
      const result = await runScript(
        'receiver/main.ts',
        [],
        cleanEnv({ WEBHOOK_SECRETS: secret, WEBHOOK_ALLOW_CIDRS: '192.0.2.0/24,010.0.0.1' }),
      );
      expect(result.code).to.equal(1);
      expect(result.stderr.trim().split('\n')).to.have.lengthOf(1);
      expect(result.stderr).to.include('WEBHOOK_ALLOW_CIDRS: "010.0.0.1" is not an IP address');
    });
  });

  describe('without WEBHOOK_SECRETS', () => {
    it('stops start-up naming WEBHOOK_SECRETS', async () => {
      const result = await runScript('receiver/main.ts', [], cleanEnv());
      expect(result.code).to.equal(1);
      expect(result.stderr).to.include('WEBHOOK_SECRETS: required');
    });
  });

  describe('with TRUST_PROXY=true', () => {
    it('stops start-up: trusting every proxy is refused', async () => {
      const result = await runScript(
        'receiver/main.ts',
        [],
        cleanEnv({ WEBHOOK_SECRETS: secret, TRUST_PROXY: 'true' }),
      );
      expect(result.code).to.equal(1);
      expect(result.stderr).to.include('TRUST_PROXY: trusting every proxy');
    });
  });

  describe('started with the allowlist off', () => {
    it('warns, accepts a delivery from scripts/sign-and-send, cuts off a slowloris client, finishes in-flight requests on SIGTERM, never logs the secret', async () => {
      const { port, child, output } = await start({ WEBHOOK_ALLOWLIST: 'off' });
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      let signalled = false;
      // A slowloris client: starts a request and never finishes its headers.
      const slowClientStarted = Date.now();
      const slowClient = new Promise<{ answer: string; heldMs: number }>((resolve) => {
        let answer = '';
        const socket = connect(port, '127.0.0.1', () =>
          socket.write('POST /webhooks HTTP/1.1\r\nHost: x\r\n'),
        );
        socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
        socket.on('close', () => resolve({ answer, heldMs: Date.now() - slowClientStarted }));
      });
      try {
        expect(output()).to.include('WEBHOOK_ALLOWLIST=off');
        const file = join(dir, 'event.json');
        writeFileSync(file, channelDidCreate('main-1'));
        const sent = await runScript(
          'scripts/sign-and-send.ts',
          [file, '--url', `http://127.0.0.1:${port}/webhooks`],
          cleanEnv({ WEBHOOK_SECRET: secret }),
        );
        expect(sent.stdout.trim()).to.equal('200 {}');
        expect(sent.code).to.equal(0);
        const wrong = await runScript(
          'scripts/sign-and-send.ts',
          [file, '--url', `http://127.0.0.1:${port}/webhooks`],
          cleanEnv({ WEBHOOK_SECRET: 'wrong' }),
        );
        expect(wrong.stdout).to.match(/^401 /);
        expect(wrong.code).to.equal(1);
        const slow = await slowClient;
        expect(slow.answer).to.match(/^HTTP\/1\.1 408/);
        // Headers are due within 5 s; the connection sweep runs every second.
        expect(slow.heldMs).to.be.below(10_000);

        // A request in flight when SIGTERM arrives is still answered.
        const inFlightBody = channelDidCreate('main-in-flight');
        const signature = sign(inFlightBody, secret);
        let answer = '';
        const socket = connect(port, '127.0.0.1');
        socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
        const closed = new Promise((resolve) => socket.on('close', resolve));
        await new Promise((resolve) => socket.once('connect', resolve));
        socket.write(
          `POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
            `x-service-signature: ${signature}\r\nContent-Length: ${Buffer.byteLength(inFlightBody)}\r\n` +
            `Connection: close\r\n\r\n${inFlightBody.slice(0, 50)}`,
        );
        await new Promise((resolve) => setTimeout(resolve, 200));
        child.kill('SIGTERM');
        signalled = true;
        await waitForOutput(output, /shutting down/);
        socket.write(inFlightBody.slice(50));
        await closed;
        expect(answer).to.match(/^HTTP\/1\.1 200 /);
        expect(answer.endsWith('{}')).to.equal(true);
      } finally {
        // Not a second signal, which exits at once (1) while the first one's shutdown still runs.
        if (!signalled) child.kill('SIGTERM');
      }
      expect(await exited, output()).to.equal(0);
      expect(output()).to.include('stopped');
      expect(output()).not.to.include(secret);
    });
  });

  describe('a sender that waits for 100 Continue before its body', () => {
    /** Sends a signed delivery's head from `localAddress`, the body only once invited; the bytes answered. */
    const deliver = (port: number, localAddress: string) =>
      new Promise<{ answer: string; closed: boolean }>((resolve, reject) => {
        const body = channelDidCreate(`main-continue-${localAddress}`);
        let answer = '';
        const socket = connect({ port, host: '127.0.0.1', localAddress }, () =>
          socket.write(
            `POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
              `x-service-signature: ${sign(body, secret)}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
              `Expect: 100-continue\r\n\r\n`,
          ),
        );
        socket.on('data', (chunk: Buffer) => {
          answer += chunk.toString();
          if (answer === 'HTTP/1.1 100 Continue\r\n\r\n') socket.write(body);
          // A final answer (not the interim one) ends with its JSON body.
          const final = answer.replace('HTTP/1.1 100 Continue\r\n\r\n', '');
          if (final.startsWith('HTTP/1.1') && final.endsWith('}'))
            setTimeout(() => resolve({ answer, closed: socket.readableEnded }), 200);
        });
        socket.on('error', reject);
      });

    it('is invited to send it only once its address passed: a refused one gets its 403 at once, then the connection closes', async () => {
      const { port, child } = await start({ WEBHOOK_ALLOW_CIDRS: '127.0.0.1/32' });
      try {
        const allowed = await deliver(port, '127.0.0.1');
        expect(allowed.answer).to.match(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
        expect(allowed.answer.endsWith('{}')).to.equal(true);
        expect(allowed.closed, 'kept alive').to.equal(false);
        const refused = await deliver(port, '127.0.0.2');
        expect(refused.answer).to.match(/^HTTP\/1\.1 403 Forbidden\r\n/);
        expect(refused.answer).not.to.include('100 Continue');
        expect(refused.answer).to.match(/^Connection: close$/im);
        expect(refused.closed, 'closed').to.equal(true);
        // Declared over WEBHOOK_MAX_BODY_BYTES: refused on its head too, the body never invited.
        const oversized = await new Promise<string>((resolve) => {
          let answer = '';
          const socket = connect(port, '127.0.0.1', () =>
            socket.write(
              'POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
                'Content-Length: 50000000\r\nExpect: 100-continue\r\n\r\n',
            ),
          );
          socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
          socket.on('end', () => resolve(answer));
        });
        expect(oversized).to.match(/^HTTP\/1\.1 413 Payload Too Large\r\n/);
        expect(oversized).not.to.include('100 Continue');
      } finally {
        await stop(child);
      }
    });
  });

  describe('with a placeholder for a secret', () => {
    it('warns at start-up naming the webhook, never the secret, and still starts', async () => {
      const { child, output } = await start({
        WEBHOOK_SECRETS: `eu=${secret},us=pw-1,us=${secret}`,
        WEBHOOK_ALLOWLIST: 'off',
      });
      try {
        const warnings = output()
          .split('\n')
          .filter((line) => line.includes('webhook secrets shorter than 16 bytes'))
          .map((line) => JSON.parse(line) as { level: number; webhooks: unknown });
        expect(warnings).to.have.lengthOf(1);
        expect(warnings[0]).to.deep.include({ level: 40, webhooks: ['us'] });
        expect(output()).not.to.include('pw-1');
      } finally {
        await stop(child);
      }
    });
  });

  // A Standard Webhooks sender's webhook whose scheme was forgotten: every delivery refused 401.
  describe('with a whsec_ secret on a webhook of the platform scheme', () => {
    it('warns at start-up naming the webhook and the variable, never the secret, and still starts', async () => {
      const { child, output } = await start({
        WEBHOOK_SECRETS: `eu=${secret},billing=${testStandardSecret}`,
        WEBHOOK_ALLOWLIST: 'off',
      });
      try {
        const warnings = output()
          .split('\n')
          .filter((line) => line.includes('Standard Webhooks form'))
          .map((line) => JSON.parse(line) as { level: number; webhooks: unknown; msg: string });
        expect(warnings).to.have.lengthOf(1);
        expect(warnings[0]).to.deep.include({ level: 40, webhooks: ['billing'] });
        expect(warnings[0]?.msg).to.include('WEBHOOK_SIGNATURE_SCHEME');
        expect(output()).not.to.include(testStandardSecret);
      } finally {
        await stop(child);
      }
    });
  });

  describe('with a platform webhook on its own header and a Standard Webhooks webhook', () => {
    it('logs one line saying how each webhook is verified (never a secret), and takes both from scripts/sign-and-send', async () => {
      const standardSecret = testStandardSecret;
      const { port, child, output } = await start({
        WEBHOOK_SECRETS: `eu=${secret},acme=${standardSecret}`,
        WEBHOOK_SIGNATURE_SCHEME: 'acme=standard-webhooks',
        WEBHOOK_SIGNATURE_HEADER: 'eu=X-EU-Signature',
        WEBHOOK_TOLERANCE_SECONDS: '120',
        WEBHOOK_ALLOWLIST: 'off',
      });
      try {
        const lines = output()
          .split('\n')
          .filter((line) => line.includes('"webhook signatures"'))
          .map((line) => JSON.parse(line) as { webhooks: unknown });
        expect(lines).to.have.lengthOf(1);
        // Both secrets are long enough: no warning about them.
        expect(output()).not.to.include('webhook secrets shorter than');
        expect(lines[0]?.webhooks).to.deep.equal([
          { name: 'eu', scheme: 'platform', headers: 'x-eu-signature', secrets: 1 },
          {
            name: 'acme',
            scheme: 'standard-webhooks',
            headers: 'webhook-id, webhook-timestamp, webhook-signature',
            secrets: 1,
            toleranceSeconds: 120,
          },
        ]);
        const url = `http://127.0.0.1:${port}/webhooks`;
        const platformFile = join(dir, 'platform-event.json');
        writeFileSync(platformFile, channelDidCreate('main-schemes'));
        const standardFile = join(dir, 'standard-event.json');
        writeFileSync(standardFile, standardEvent('main-schemes'));
        const send = (file: string, args: string[], sendSecret: string) =>
          runScript(
            'scripts/sign-and-send.ts',
            [file, '--url', url, ...args],
            cleanEnv({ WEBHOOK_SECRET: sendSecret }),
          );

        const platform = await send(platformFile, ['--header', 'X-EU-Signature'], secret);
        expect(platform.stdout.trim()).to.equal('200 {}');
        const standard = await send(standardFile, ['--scheme', 'standard-webhooks'], standardSecret);
        expect(standard.stdout.trim()).to.equal('200 {}');
        // The sample docs/receiver.md sends to such a webhook.
        const sample = join(repoRoot, 'examples/events/standard-webhooks.json');
        const sampled = await send(sample, ['--scheme', 'standard-webhooks'], standardSecret);
        expect(sampled.stdout.trim(), sampled.stderr).to.equal('200 {}');
        const stale = String(Math.floor(Date.now() / 1000) - 121);
        const refused = await send(
          standardFile,
          ['--scheme', 'standard-webhooks', '--timestamp', stale],
          standardSecret,
        );
        expect(refused.stdout.trim()).to.equal(
          '401 {"status":"error","code":401000,"message":"webhook-timestamp is more than 120 s in the past"}',
        );
        expect(refused.code).to.equal(1);
        const mistyped = await send(standardFile, ['--scheme', 'standard-webhooks'], 'whsec_c2hvcnQ=');
        expect(mistyped.code).to.equal(2);
        expect(mistyped.stderr).to.include(
          'WEBHOOK_SECRET: decodes to 5 bytes; expected a Standard Webhooks secret',
        );
      } finally {
        await stop(child);
      }
      expect(output()).not.to.include(secret);
      expect(output()).not.to.include(standardSecret.slice('whsec_'.length));
    });
  });

  // Behind a load balancer that keeps idle connections to it longer than the receiver does, the
  // receiver may close one just as the balancer sends a request on it: a 502 for the platform.
  describe('run as a user that may write SPOOL_DIR but does not own it (a Kubernetes emptyDir)', () => {
    it('starts and listens', async () => {
      const spoolDir = foreignWritableFolder(dir, 'empty-dir');
      const port = await freePort();
      const { command, args } = unprivileged(process.execPath, [resolve(repoRoot, 'receiver/main.ts')]);
      const { child } = await startCommand(
        command,
        args,
        cleanEnv({
          REDIS_URL: testStack().redisUrl,
          QUEUE_PREFIX: useQueuePrefix(),
          RECEIVER_PORT: String(port),
          WEBHOOK_SECRETS: `eu=${secret}`,
          SPOOL_DIR: spoolDir,
        }),
        /receiver listening/,
      );
      try {
        expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).to.equal(200);
      } finally {
        await stop(child);
      }
    });
  });

  describe('with a SPOOL_DIR that cannot be used (a file)', () => {
    it('stops start-up with one fatal line naming SPOOL_DIR and the reason, no stack trace', async () => {
      const file = join(dir, 'not-a-folder');
      writeFileSync(file, 'a file');
      const result = await runScript(
        'receiver/main.ts',
        [],
        cleanEnv({
          REDIS_URL: testStack().redisUrl,
          QUEUE_PREFIX: useQueuePrefix(),
          RECEIVER_PORT: String(await freePort()),
          WEBHOOK_SECRETS: `eu=${secret}`,
          SPOOL_DIR: file,
        }),
      );
      expect(result.code).to.equal(1);
      expect(result.stderr).to.equal('');
      const fatal = result.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { level: number; msg: string })
        .filter((line) => line.level === 60);
      expect(fatal).to.have.lengthOf(1);
      expect(fatal[0]?.msg).to.match(/^SPOOL_DIR .*not-a-folder.*: .*(EEXIST|ENOTDIR)/);
      expect(fatal[0]?.msg).not.to.include('uncaught');
    });
  });

  describe('with RECEIVER_KEEPALIVE_TIMEOUT_MS=10000', () => {
    it('keeps an idle connection open past the 5 s default (and past the 5 s header limit) and answers on it', async () => {
      const { port, child } = await start({
        WEBHOOK_ALLOWLIST: 'off',
        RECEIVER_KEEPALIVE_TIMEOUT_MS: '10000',
      });
      const socket = connect(port, '127.0.0.1');
      try {
        socket.on('error', () => undefined);
        let received = '';
        let closed = false;
        socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
        socket.on('close', () => (closed = true));
        await new Promise((resolve) => socket.once('connect', resolve));
        const get = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';
        socket.write(get);
        await waitForOutput(() => received, /\r\n\r\n\{[^}]*\}/);
        expect(received).to.match(/^HTTP\/1\.1 200 /);
        expect(received).to.match(/\r\nKeep-Alive: timeout=10\r\n/i);
        // Past the default (5 s, and Node's 1 s of grace on top), well inside the 10 s configured.
        await new Promise((resolve) => setTimeout(resolve, 7_500));
        expect(closed, 'the idle connection was closed').to.equal(false);
        received = '';
        socket.write(get);
        await waitForOutput(() => received, /\r\n\r\n\{[^}]*\}/);
        expect(received).to.match(/^HTTP\/1\.1 200 /);
      } finally {
        socket.destroy();
        await stop(child);
      }
    });
  });

  describe('where it listens', () => {
    it('is loopback only when no HOST is set: the machine’s other addresses refuse connections', async function () {
      const external = externalAddress();
      const { port, child, output } = await start({});
      try {
        expect(await accepts('127.0.0.1', port)).to.equal(true);
        expect(await accepts(external, port)).to.equal(false);
        expect(output()).to.include('"host":"127.0.0.1"');
      } finally {
        await stop(child);
      }
    });

    it('is every interface with RECEIVER_HOST=0.0.0.0', async function () {
      const external = externalAddress();
      const { port, child } = await start({ HOST: '127.0.0.1', RECEIVER_HOST: '0.0.0.0' });
      try {
        expect(await accepts(external, port)).to.equal(true);
      } finally {
        await stop(child);
      }
    });
  });

  describe('with its port already in use', () => {
    const occupied = useOccupiedPort();

    for (const variable of ['RECEIVER_PORT', 'METRICS_PORT']) {
      it(`${variable}: logs one line naming the address and the variable, exits 1, no stack trace`, async () => {
        const result = await runScript(
          'receiver/main.ts',
          [],
          cleanEnv({
            REDIS_URL: testStack().redisUrl,
            QUEUE_PREFIX: useQueuePrefix(),
            RECEIVER_PORT: String(await freePort()),
            [variable]: String(occupied.port()),
            WEBHOOK_SECRETS: `eu=${secret}`,
            SPOOL_DIR: join(dir, `spool-busy-${variable}`),
          }),
        );
        expect(result.code).to.equal(1);
        expect(result.stderr).to.equal('');
        // The one fatal line; a warning of a check started before the listen (the test Redis's
        // persistence) may end after it, so it is not always the last line.
        const fatal = result.stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as Record<string, unknown>)
          .filter((entry) => entry.level === 60);
        expect(fatal).to.have.lengthOf(1);
        expect(fatal[0]).to.include({
          msg: `cannot listen on 127.0.0.1:${occupied.port()}: EADDRINUSE (${variable})`,
        });
      });
    }
  });

  describe('with a listen address not on this machine', () => {
    // 192.0.2.1 (TEST-NET-1) is on no interface here: the address is wrong, not the port.
    for (const variable of ['RECEIVER_HOST', 'HOST']) {
      it(`${variable}: logs one line naming the address and ${variable}, exits 1`, async () => {
        const port = await freePort();
        const result = await runScript(
          'receiver/main.ts',
          [],
          cleanEnv({
            REDIS_URL: testStack().redisUrl,
            QUEUE_PREFIX: useQueuePrefix(),
            RECEIVER_PORT: String(port),
            [variable]: '192.0.2.1',
            WEBHOOK_SECRETS: `eu=${secret}`,
            SPOOL_DIR: join(dir, `spool-host-${variable}`),
          }),
        );
        expect(result.code).to.equal(1);
        expect(result.stderr).to.equal('');
        const last = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
        expect(last).to.include({
          level: 60,
          msg: `cannot listen on 192.0.2.1:${port}: EADDRNOTAVAIL (${variable})`,
        });
      });
    }
  });

  describe('with METRICS_PORT set and no METRICS_TOKEN', () => {
    it('serves /metrics on 127.0.0.1:METRICS_PORT only, not on RECEIVER_PORT', async () => {
      const [port, metricsPort] = [await freePort(), await freePort()];
      const { child } = await startScript(
        'receiver/main.ts',
        cleanEnv({
          REDIS_URL: testStack().redisUrl,
          QUEUE_PREFIX: useQueuePrefix(),
          RECEIVER_PORT: String(port),
          METRICS_PORT: String(metricsPort),
          WEBHOOK_SECRETS: `eu=${secret}`,
          SPOOL_DIR: join(dir, 'spool-metrics'),
        }),
        /receiver listening/,
      );
      try {
        expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).to.equal(404);
        const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
        expect(metrics.status).to.equal(200);
        expect(await metrics.text()).to.include('webhook_received_total');
        expect((await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).status).to.equal(404);
      } finally {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
    });
  });
});

import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hs256Token } from '../../scripts/lib/hs256-token.ts';
import { freePort } from '../../scripts/lib/local-servers.ts';
import { sign, channelDidCreate } from '../receiver/support/signed-request.ts';
import { accepts, externalAddress } from '../support/external-address.ts';
import { cleanEnv, runScript, startScript } from '../support/run-script.ts';

/** The secrets the stack used to have written in the repository: they must open nothing now. */
const FORMER_JWT_SECRET = 'dev-only-secret-do-not-use-in-production';
const FORMER_WEBHOOK_SECRET = 'dev-secret';

describe('npm start (scripts/dev-stack.ts)', function () {
  this.timeout(180_000);
  let dataDir: string;
  let ports: { receiver: number; tray: number; admin: number };
  let stack: { child: ChildProcess; output: () => string } | undefined;
  const url = (port: number, path: string) => `http://127.0.0.1:${port}${path}`;

  /** As a terminal runs it: in a process group of its own, so Ctrl-C is a SIGINT to that group. */
  const start = async () => {
    stack = await startScript(
      'scripts/dev-stack.ts',
      cleanEnv({
        STACK_DATA_DIR: dataDir,
        RECEIVER_PORT: String(ports.receiver),
        TRAY_PORT: String(ports.tray),
        ADMIN_PORT: String(ports.admin),
      }),
      /ready\. Press Ctrl-C/,
      120_000,
      { detached: true },
    );
    return stack;
  };
  const ctrlC = (child: ChildProcess) => process.kill(-child.pid!, 'SIGINT');
  const exitOf = (child: ChildProcess) =>
    new Promise<number | null>((resolve) => {
      if (child.exitCode !== null) resolve(child.exitCode);
      else child.once('exit', (code) => resolve(code));
    });
  const secrets = () =>
    JSON.parse(readFileSync(join(dataDir, 'dev-secrets.json'), 'utf8')) as Record<string, string>;
  const tool = (script: string, args: string[]) =>
    runScript(script, args, cleanEnv({ STACK_DATA_DIR: dataDir, RECEIVER_PORT: String(ports.receiver) }));

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'stack-test-'));
    ports = { receiver: await freePort(), tray: await freePort(), admin: await freePort() };
  });
  after(async () => {
    if (stack && stack.child.exitCode === null) {
      process.kill(-stack.child.pid!, 'SIGKILL');
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  describe('first run', () => {
    before(start);

    it('starts its own servers and both services and reports ready', async () => {
      const tray = await fetch(url(ports.tray, '/healthz'));
      expect((await fetch(url(ports.receiver, '/healthz'))).status).to.equal(200);
      expect(tray.status).to.equal(200);
      expect(await tray.json()).to.deep.equal({ status: 'ok' });
      // A PostgreSQL cluster under the stack's data directory, and the tray on its PostgreSQL adapter
      // (no FerretDB: the stack runs the default storage).
      expect(existsSync(join(dataDir, 'postgres', 'data', 'PG_VERSION'))).to.equal(true);
      const ready = await fetch(url(ports.tray, '/readyz'));
      expect(ready.status).to.equal(200);
      expect(((await ready.json()) as { checks: Record<string, unknown> }).checks.storage).to.deep.equal({
        ok: true,
        detail: { engine: 'postgres' },
      });
      expect(stack!.output()).to.match(/\[stack\] postgres postgres:\/\/postgres@127\.0\.0\.1:\d+\/tray/);
      expect(stack!.output()).not.to.include('ferretdb');
      // The quick start's demo page is on in the development stack (off by default elsewhere).
      const demo = await fetch(url(ports.tray, '/demo'));
      expect(demo.status).to.equal(200);
      expect(await demo.text()).to.include('<script src="/demo/demo.js"');
    });

    it('listens on loopback only, and says so', async function () {
      expect(stack!.output()).to.include(`receiver http://127.0.0.1:${ports.receiver}`);
      expect(stack!.output()).to.include('listening on 127.0.0.1 only');
      const external = externalAddress();
      if (external === undefined) this.skip();
      for (const port of Object.values(ports)) expect(await accepts(external, port)).to.equal(false);
    });

    it('makes its own secrets in a 0600 file, and prints how to sign in and mint a token', () => {
      const file = join(dataDir, 'dev-secrets.json');
      expect(statSync(file).mode & 0o777).to.equal(0o600);
      for (const value of Object.values(secrets())) expect(value).to.have.length.of.at.least(43);
      const output = stack!.output();
      expect(output).to.include(`secrets  made for this machine in ${file}`);
      expect(output).to.include(`admin    http://127.0.0.1:${ports.admin}/admin/queues`);
      expect(output).to.include('sign in  the admin side with ADMIN_TOKEN from');
      expect(output).to.include('npm run mint-token -- --user <id>');
      for (const value of Object.values(secrets())) expect(output).not.to.include(value);
    });

    it('opens nothing to the secrets once written in the repository', async () => {
      const body = channelDidCreate('stack-former-secret');
      const webhook = await fetch(url(ports.receiver, '/webhooks'), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-service-signature': sign(body, FORMER_WEBHOOK_SECRET),
        },
        body,
      });
      expect(webhook.status).to.equal(401);
      const token = await hs256Token(FORMER_JWT_SECRET, 'mallory');
      const tray = await fetch(url(ports.tray, '/notifications/v3'), {
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(tray.status).to.equal(401);
    });

    it('takes tokens from mint-token and events from sign-and-send with no secret in their environment', async () => {
      const minted = await tool('scripts/mint-token.ts', ['--user', 'u-ana']);
      expect(minted.code).to.equal(0);
      const tray = await fetch(url(ports.tray, '/notifications/v3'), {
        headers: { Authorization: `Bearer ${minted.stdout.trim()}` },
      });
      expect(tray.status).to.equal(200);
      const file = join(dataDir, 'event.json');
      writeFileSync(file, channelDidCreate('stack-sign-and-send'));
      const sent = await tool('scripts/sign-and-send.ts', [file]);
      expect(sent.stdout.trim()).to.equal('200 {}');
    });

    it('serves the admin side on its own port to ADMIN_TOKEN only', async () => {
      const admin = { Authorization: `Bearer ${secrets().ADMIN_TOKEN}` };
      expect((await fetch(url(ports.admin, '/admin/events'), { headers: admin })).status).to.equal(200);
      expect((await fetch(url(ports.tray, '/admin/events'), { headers: admin })).status).to.equal(404);
      const minted = await tool('scripts/mint-token.ts', ['--user', 'u-ana']);
      const user = { Authorization: `Bearer ${minted.stdout.trim()}` };
      expect((await fetch(url(ports.admin, '/admin/events'), { headers: user })).status).to.equal(401);
    });

    it('on Ctrl-C, both services drain once (no "exit now") and everything stops with code 0', async () => {
      const { child, output } = stack!;
      const exited = exitOf(child);
      ctrlC(child);
      expect(await exited).to.equal(0);
      expect(await accepts('127.0.0.1', ports.receiver)).to.equal(false);
      expect(await accepts('127.0.0.1', ports.tray)).to.equal(false);
      const lines = output().split('\n');
      for (const name of ['receiver', 'tray-service']) {
        const own = lines.filter((line) => line.includes(`"name":"${name}"`));
        expect(own.filter((line) => line.includes('"msg":"shutting down"'))).to.have.lengthOf(1);
        expect(own.filter((line) => line.includes('"msg":"stopped"'))).to.have.lengthOf(1);
      }
      expect(output()).not.to.include('second signal');
      expect(output()).to.include('[stack] stopped');
    });
  });

  describe('a later run on the same data directory', () => {
    let firstSecrets: Record<string, string>;
    let tokenFromFirstRun: string;
    before(async () => {
      firstSecrets = secrets();
      tokenFromFirstRun = await hs256Token(firstSecrets.JWT_SECRET!, 'u-ana');
      await start();
    });

    it('reuses the secrets, so earlier tokens still work', async () => {
      expect(secrets()).to.deep.equal(firstSecrets);
      expect(stack!.output()).not.to.include('secrets  made for this machine');
      const tray = await fetch(url(ports.tray, '/notifications/v3'), {
        headers: { Authorization: `Bearer ${tokenFromFirstRun}` },
      });
      expect(tray.status).to.equal(200);
    });

    it('on a second Ctrl-C, the services exit at once and the stack still stops its servers', async () => {
      const { child, output } = stack!;
      const exited = exitOf(child);
      const started = Date.now();
      ctrlC(child);
      await new Promise((resolve) => setTimeout(resolve, 100));
      ctrlC(child);
      expect(await exited).to.equal(0);
      expect(Date.now() - started).to.be.below(15_000);
      expect(output()).to.include('[stack] second signal: the services exit at once');
      expect(output()).to.include('[stack] stopped');
      expect(await accepts('127.0.0.1', ports.tray)).to.equal(false);
    });
  });
});

import { expect } from 'chai';
import { SignJWT } from 'jose';
import { startTrayProcess, trayJwtSecret, type TrayProcess } from '../reliability/support/tray-process.ts';
import { accepts, externalAddress } from '../support/external-address.ts';
import { rmSync } from 'node:fs';
import { freePort } from '../../scripts/lib/local-servers.ts';
import { cleanEnv, runScript } from '../support/run-script.ts';
import { useOccupiedPort } from '../support/use-occupied-port.ts';
import { trayMetricsToken } from '../reliability/support/tray-process.ts';
import request from 'supertest';
import { channelDidCreate, signedHeaders } from '../receiver/support/signed-request.ts';
import { startTestReceiver } from '../receiver/support/use-receiver.ts';
import { uniqueName, useQueuePrefix } from '../support/suite-resources.ts';
import { openSse } from './live/support/sse-client.ts';
import { useTrayStorage } from '../support/use-tray-storage.ts';
import { testStack } from '../support/test-stack.ts';

const ADMIN_TOKEN = 'main-admin-listener-token-0123456789abcdef';

// tray-service/main.ts as operators run it: public API and admin API on separate listeners, both
// on loopback unless configured, and a drain on the first signal.
/**
 * The fatal line of a start that could not listen, once its worker had started taking jobs: the
 * process stopped through its shutdown after it (the jobs in hand finish, or go back to the queue,
 * rather than stall in a process that exits under them), its first purge, cut short by that
 * shutdown, failing nothing.
 */
function fatalThenStopped(stdout: string): Record<string, unknown> | undefined {
  const lines = stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const fatal = lines.findIndex((line) => line.level === 60);
  const after = lines.slice(fatal + 1).map((line) => String(line.msg));
  expect(after[0], 'the shutdown after the fatal line').to.equal('shutting down');
  expect(after.at(-1)).to.equal('stopped');
  expect(after.filter((msg) => msg.includes('failed'))).to.deep.equal([]);
  return lines[fatal];
}

describe('tray-service/main.ts listeners', function () {
  this.timeout(60_000);
  const suite = useTrayStorage();
  const prefix = useQueuePrefix();
  const start = (env: NodeJS.ProcessEnv) =>
    startTrayProcess({
      redisUrl: testStack().redisUrl,
      prefix,
      env: { ...suite.env, ...env },
    });

  describe('with ADMIN_TOKEN set', () => {
    let tray: TrayProcess;
    let adminPort: number;
    before(async () => {
      tray = await start({ ADMIN_TOKEN });
      adminPort = tray.adminPort;
    });
    after(() => tray.kill());
    const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

    it('serves the admin API on ADMIN_PORT and nothing of it on the public port', async () => {
      const admin = await fetch(`http://127.0.0.1:${adminPort}/admin/events`, {
        headers: bearer(ADMIN_TOKEN),
      });
      expect(admin.status).to.equal(200);
      const publicPort = await fetch(`http://127.0.0.1:${tray.port}/admin/events`, {
        headers: bearer(ADMIN_TOKEN),
      });
      expect(publicPort.status).to.equal(404);
      const doc = (await (await fetch(`http://127.0.0.1:${tray.port}/openapi.json`)).json()) as {
        paths: Record<string, unknown>;
      };
      expect(Object.keys(doc.paths).filter((path) => path.startsWith('/admin'))).to.deep.equal([]);
    });

    it('refuses a user token whose role claim says admin', async () => {
      const token = await new SignJWT({ role: 'admin', roles: ['admin'] })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('mallory')
        .setExpirationTime('10m')
        .sign(new TextEncoder().encode(trayJwtSecret));
      const forged = await fetch(`http://127.0.0.1:${adminPort}/admin/events`, { headers: bearer(token) });
      expect(forged.status).to.equal(401);
    });

    it('streams a webhook its own worker applied to an open tail on the admin port', async () => {
      const receiver = await startTestReceiver(prefix);
      const tail = await openSse(`http://127.0.0.1:${adminPort}/admin/events/tail?event=channel.didCreate`, {
        ...bearer(ADMIN_TOKEN),
      });
      try {
        const body = channelDidCreate(uniqueName('ch'));
        await request(receiver.app).post('/webhooks').set(signedHeaders(body)).send(body).expect(200);
        const event = await tail.next((e) => e.event === 'stored', { timeoutMs: 10_000 });
        expect(JSON.parse(event.data)).to.include({ event: 'channel.didCreate', status: 'stored' });
      } finally {
        tail.close();
        await receiver.close();
        rmSync(receiver.spoolDir, { recursive: true, force: true });
      }
    });

    it('listens on loopback only, the admin port too', async function () {
      expect(tray.output()).to.match(/"host":"127\.0\.0\.1","port":\d+,"role":"all".*tray service listening/);
      expect(tray.output()).to.match(/"host":"127\.0\.0\.1","port":\d+.*admin API listening/);
      const external = externalAddress();
      expect(await accepts(external, tray.port)).to.equal(false);
      expect(await accepts(external, adminPort)).to.equal(false);
    });

    it('drains on the first SIGINT and exits 0', async () => {
      const exited = new Promise<number | null>((resolve) =>
        tray.child.once('exit', (code) => resolve(code)),
      );
      tray.child.kill('SIGINT');
      expect(await exited).to.equal(0);
      expect(tray.output()).to.include('"msg":"shutting down"').and.include('"msg":"stopped"');
      expect(tray.output()).not.to.include('second signal');
      expect(await accepts('127.0.0.1', adminPort)).to.equal(false);
    });
  });

  describe('with admin JWTs on the tray API key and JWT_AUDIENCE unset', () => {
    let tray: TrayProcess;
    before(async () => {
      tray = await start({ ADMIN_JWT_AUDIENCE: 'tray-admin', ADMIN_JWT_ISSUER: 'ops' });
    });
    after(() => tray.kill());
    const signed = (audience?: string | string[]) => {
      const jwt = new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('ops-ana').setIssuer('ops');
      return (audience === undefined ? jwt : jwt.setAudience(audience))
        .setExpirationTime('10m')
        .sign(new TextEncoder().encode(trayJwtSecret));
    };
    const counts = async (token: string) =>
      fetch(`http://127.0.0.1:${tray.port}/notifications/v3`, {
        headers: { Authorization: `Bearer ${token}` },
      });

    it('refuses an admin JWT on the tray API (401), where it would act as its sub', async () => {
      const admin = await signed('tray-admin');
      const asAdmin = await fetch(`http://127.0.0.1:${tray.adminPort}/admin/events`, {
        headers: { Authorization: `Bearer ${admin}` },
      });
      expect(asAdmin.status).to.equal(200);
      const asUser = await counts(admin);
      expect(asUser.status).to.equal(401);
      expect(((await asUser.json()) as { message: string }).message).to.equal('token claim "aud" is invalid');
      expect((await counts(await signed(['other', 'tray-admin']))).status).to.equal(401);
      expect((await counts(await signed())).status).to.equal(200);
      expect((await counts(await signed('another-service'))).status).to.equal(200);
    });
  });

  describe('without an admin credential', () => {
    it('serves no admin API at all, and says how to turn it on', async () => {
      const tray = await start({});
      try {
        expect(tray.output()).to.include('admin API off: set ADMIN_TOKEN');
        expect(await accepts('127.0.0.1', tray.adminPort)).to.equal(false);
      } finally {
        await tray.kill();
      }
    });
  });

  describe('with a port already in use', () => {
    const occupied = useOccupiedPort();

    for (const variable of ['TRAY_PORT', 'ADMIN_PORT']) {
      it(`${variable}: logs one line naming the address and the variable, exits 1, no stack trace`, async () => {
        const result = await runScript(
          'tray-service/main.ts',
          [],
          cleanEnv({
            REDIS_URL: testStack().redisUrl,
            QUEUE_PREFIX: prefix,
            TRAY_PORT: String(await freePort()),
            ADMIN_PORT: String(await freePort()),
            ADMIN_TOKEN,
            JWT_SECRET: trayJwtSecret,
            METRICS_TOKEN: trayMetricsToken,
            ...suite.env,
            [variable]: String(occupied.port()),
          }),
          40_000,
        );
        expect(result.code).to.equal(1);
        expect(result.stderr).to.equal('');
        expect(fatalThenStopped(result.stdout)).to.include({
          msg: `cannot listen on 127.0.0.1:${occupied.port()}: EADDRINUSE (${variable})`,
        });
      });
    }
  });

  describe('with a listen address not on this machine', () => {
    // 192.0.2.1 (TEST-NET-1) is on no interface here: the address is wrong, not the port.
    for (const [variable, portVariable] of [
      ['TRAY_HOST', 'TRAY_PORT'],
      ['HOST', 'TRAY_PORT'],
      ['ADMIN_HOST', 'ADMIN_PORT'],
    ] as const) {
      it(`${variable}: logs one line naming the address and ${variable}, exits 1`, async () => {
        const ports = { TRAY_PORT: String(await freePort()), ADMIN_PORT: String(await freePort()) };
        const result = await runScript(
          'tray-service/main.ts',
          [],
          cleanEnv({
            REDIS_URL: testStack().redisUrl,
            QUEUE_PREFIX: prefix,
            ...ports,
            ADMIN_TOKEN,
            JWT_SECRET: trayJwtSecret,
            METRICS_TOKEN: trayMetricsToken,
            // A non-loopback admin listener must say it is behind TLS.
            ...(variable === 'ADMIN_HOST' ? { ADMIN_BEHIND_TLS: 'on', ADMIN_TRUST_PROXY: 'loopback' } : {}),
            ...suite.env,
            [variable]: '192.0.2.1',
          }),
          40_000,
        );
        expect(result.code).to.equal(1);
        expect(result.stderr).to.equal('');
        expect(fatalThenStopped(result.stdout)).to.include({
          msg: `cannot listen on 192.0.2.1:${ports[portVariable]}: EADDRNOTAVAIL (${variable})`,
        });
      });
    }
  });
});

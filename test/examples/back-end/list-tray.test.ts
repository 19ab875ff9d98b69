import { expect } from 'chai';
import express from 'express';
import { listTray } from '../../../examples/back-end/list-tray.ts';
import { freePort } from '../../../scripts/lib/local-servers.ts';
import { seedRecords } from '../../support/seed-tray.ts';
import { cleanEnv, runScript } from '../../support/run-script.ts';
import { TEST_SECRET } from '../../tray-service/api/support/api-harness.ts';
import { useServedTrayApi } from '../../client/support/serve-tray-api.ts';

const NOW = Date.now();
const MIN = 60_000;

describe('the back-end example (examples/back-end): a user’s tray listed through the client', () => {
  const api = useServedTrayApi();
  before(async () => {
    await seedRecords(api.harness.storage, [
      ...Array.from({ length: 14 }, (_, i) => ({
        userId: 'u-ana',
        targetId: `p-${i}`,
        lastUpdate: NOW - i * MIN,
      })),
      {
        userId: 'u-ana',
        verb: 'post' as const,
        targetId: 'p-read',
        lastUpdate: NOW - 30 * MIN,
        hasRead: true,
      },
      { userId: 'u-ben', targetId: 'not-ana', lastUpdate: NOW },
    ]);
  });

  it('listTray() answers the unread count and the newest records, across pages, the user’s only', async () => {
    const listing = await listTray({
      trayUrl: api.baseUrl,
      jwtSecret: TEST_SECRET,
      userId: 'u-ana',
      limit: 12,
    });
    expect(listing.totalUnreadCount).to.equal(14);
    expect(listing.records.map((record) => record.targetId)).to.deep.equal(
      Array.from({ length: 12 }, (_, i) => `p-${i}`),
    );
  });

  it('fetches only the history pages it shows: a limit that ends a page fetches no more', async () => {
    // The service's own app behind a counter of the history pages asked for (10 records a page).
    let pages = 0;
    const counting = express();
    counting.use((req, _res, next) => {
      if (req.path === '/notifications/v3/history') pages += 1;
      next();
    });
    counting.use(api.harness.app());
    const listing = await listTray({
      trayUrl: await api.serve(counting),
      jwtSecret: TEST_SECRET,
      userId: 'u-ana',
      limit: 10,
    });
    expect(listing.records).to.have.lengthOf(10);
    expect(pages).to.equal(1);
  });

  describe('run as a program (npm run example:back-end)', () => {
    it('prints the count, then one line per record, unread ones marked', async () => {
      const result = await runScript(
        'examples/back-end/main.ts',
        ['--user', 'u-ana', '--limit', '20'],
        cleanEnv({ TRAY_URL: api.baseUrl, JWT_SECRET: TEST_SECRET }),
      );
      expect(result.stderr).to.equal('');
      expect(result.code).to.equal(0);
      const lines = result.stdout.trim().split('\n');
      expect(lines[0]).to.equal('u-ana: 14 unread');
      expect(lines.slice(1)).to.have.lengthOf(15);
      expect(lines.slice(1).filter((line) => line.startsWith('*'))).to.have.lengthOf(14);
      expect(lines.at(-1)).to.match(/^ {2}\d{4}-\d\d-\d\dT\S+ Ana posted/);
    });

    // A CRLF env file sourced by a shell leaves the secret's `\r`: read as it was, it signed tokens
    // the tray refused (401), as the services and the other tools read it (trimmed) it works.
    it('reads JWT_SECRET as the services do: a trailing carriage return is no part of it', async () => {
      const result = await runScript(
        'examples/back-end/main.ts',
        ['--user', 'u-ana', '--limit', '1'],
        cleanEnv({ TRAY_URL: api.baseUrl, JWT_SECRET: `${TEST_SECRET}\r` }),
      );
      expect(result.stderr).to.equal('');
      expect(result.stdout.split('\n')[0]).to.equal('u-ana: 14 unread');
    });

    it('stops with one line naming the tray service and why when it is down', async () => {
      const port = await freePort();
      const result = await runScript(
        'examples/back-end/main.ts',
        ['--user', 'u-ana'],
        cleanEnv({ TRAY_URL: `http://127.0.0.1:${port}`, JWT_SECRET: TEST_SECRET }),
      );
      expect(result.code).to.equal(1);
      expect(result.stderr).to.equal(
        `error: cannot reach the tray service at http://127.0.0.1:${port}: ECONNREFUSED: is npm start running? TRAY_URL, or TRAY_PORT and HOST, say where it is\n`,
      );
    });

    it('without TRAY_URL, finds the tray service where npm start puts it (TRAY_PORT, HOST), as try-stack does', async () => {
      const result = await runScript(
        'examples/back-end/main.ts',
        ['--user', 'u-ana', '--limit', '1'],
        cleanEnv({ TRAY_PORT: new URL(api.baseUrl).port, HOST: '127.0.0.1', JWT_SECRET: TEST_SECRET }),
      );
      expect(result.stderr).to.equal('');
      expect(result.code).to.equal(0);
      expect(result.stdout).to.match(/^u-ana: 14 unread\n/);
    });

    it('refuses a TRAY_URL with a password, which fetch would repeat in its error', async () => {
      const result = await runScript(
        'examples/back-end/main.ts',
        ['--user', 'u-ana'],
        cleanEnv({ TRAY_URL: 'http://ops:hunter2@127.0.0.1:8081', JWT_SECRET: TEST_SECRET }),
      );
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include('TRAY_URL').and.not.include('hunter2');
    });

    it('stops with one line naming the variable when TRAY_URL is not a URL', async () => {
      const result = await runScript(
        'examples/back-end/main.ts',
        ['--user', 'u-ana'],
        cleanEnv({ TRAY_URL: 'not a url', JWT_SECRET: TEST_SECRET }),
      );
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include('TRAY_URL');
    });
  });
});

import type Bull from 'bull';
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { closeServer, listen } from '../../../shared/http/listen.ts';
import { createWebhookQueue, type WebhookJobData } from '../../../shared/queue/webhook-queue.ts';
import { launchLocalChromium } from '../../../scripts/lib/local-chromium.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { testStack } from '../../support/test-stack.ts';
import { ADMIN_TOKEN, adminApp } from './admin-fixtures.ts';

describe('queue dashboard in a real browser (headless Chromium)', function () {
  this.timeout(90_000);
  const suite = useTrayStorage();
  const prefix = useQueuePrefix();
  let queue: Bull.Queue<WebhookJobData>;
  let server: Server;
  let base: string;
  let closeApp: () => void;
  let context: BrowserContext;
  let profileDir: string;

  before(async () => {
    queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    for (let i = 0; i < 3; i += 1) {
      const job = {
        dedupeKey: `k${i}`,
        webhook: 'main',
        receivedAt: new Date().toISOString(),
        event: 'x',
        data: {},
      };
      await queue.add(job, { jobId: job.dedupeKey });
    }
    const { app, close } = adminApp(suite.storage, { queues: [queue] });
    closeApp = close;
    server = await listen(app, { port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    profileDir = mkdtempSync(join(tmpdir(), 'chromium-profile-'));
    // Only 127.0.0.1 is reachable: the dashboard's web-font link must not leave the machine.
    context = await launchLocalChromium(profileDir);
  });

  after(async () => {
    await context?.close();
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
    if (server) await closeServer(server);
    closeApp?.();
    await queue?.close();
  });

  it('sends a browser without a session to the sign-in form', async () => {
    const page = await context.newPage();
    const response = await page.goto(`${base}/admin/queues`);
    expect(response?.status()).to.equal(200);
    expect(page.url()).to.equal(`${base}/admin/login?next=%2Fadmin%2Fqueues`);
    expect(await page.locator('input[name=token]').getAttribute('type')).to.equal('password');
    await page.close();
  });

  it('signs in through the form (no token in any URL), shows the queue and its counts, and signs out', async () => {
    const page = await context.newPage();
    const urls: string[] = [];
    page.on('request', (request) => urls.push(request.url()));
    await page.goto(`${base}/admin/queues/login`);
    expect(page.url()).to.equal(`${base}/admin/login?next=%2Fadmin%2Fqueues`);
    await page.fill('input[name=token]', ADMIN_TOKEN);
    await Promise.all([page.waitForURL(`${base}/admin/queues`), page.click('button[type=submit]')]);
    await page.getByText('webhook-events').first().waitFor({ timeout: 30_000 });
    // The counts arrive from the dashboard's API after the first paint.
    await page.getByText('3 Jobs').waitFor({ timeout: 30_000 });
    const text = await page.locator('body').innerText();
    expect(text).to.match(/\bWAITING\s*3\b/i);
    expect(text).to.include('3 Jobs');
    expect(urls.filter((url) => url.includes(ADMIN_TOKEN))).to.deep.equal([]);

    await page.goto(`${base}/admin/logout`);
    await Promise.all([page.waitForURL(`${base}/admin/login`), page.click('button[type=submit]')]);
    await page.goto(`${base}/admin/queues`);
    expect(page.url()).to.equal(`${base}/admin/login?next=%2Fadmin%2Fqueues`);
    await page.close();
  });
});

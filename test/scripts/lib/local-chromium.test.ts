import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { launchLocalChromium } from '../../../scripts/lib/local-chromium.ts';
import { closeServer } from '../../../shared/http/listen.ts';

describe('launchLocalChromium (headless Chromium)', function () {
  this.timeout(60_000);
  let server: Server;
  let port: number;
  let context: BrowserContext;
  let profileDir: string;

  before(async () => {
    // On every loopback address, as a stack started with HOST=localhost or HOST=::1 is.
    server = createServer((_req, res) => res.end('<title>here</title>'));
    await new Promise<void>((resolve) => server.listen(0, '::', resolve));
    port = (server.address() as AddressInfo).port;
    profileDir = mkdtempSync(join(tmpdir(), 'chromium-profile-'));
    context = await launchLocalChromium(profileDir);
  });
  after(async () => {
    await context?.close();
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
    if (server) await closeServer(server);
  });

  for (const host of ['127.0.0.1', 'localhost', '[::1]'])
    it(`reaches a local service by ${host}, as the stack's tools name it`, async () => {
      const page = await context.newPage();
      const response = await page.goto(`http://${host}:${port}/`);
      expect(response?.status()).to.equal(200);
      expect(await page.title()).to.equal('here');
      await page.close();
    });

  it('refuses every other host: nothing a page links to leaves the machine', async () => {
    const page = await context.newPage();
    const failed = await page.goto('http://example.com/').then(
      () => undefined,
      (error: Error) => error.message,
    );
    expect(failed).to.match(/net::ERR_FAILED/);
    await page.close();
  });
});

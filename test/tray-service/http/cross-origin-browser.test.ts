import { expect } from 'chai';
import express from 'express';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { launchLocalChromium } from '../../../scripts/lib/local-chromium.ts';
import { closeServer, listen } from '../../../shared/http/listen.ts';
import { clientDistDir } from '../../../tray-service/demo/load-client-modules.ts';
import { buildClient } from '../../support/build-client.ts';
import { tokenFor } from '../api/support/api-harness.ts';
import { useLiveTray } from '../live/support/live-harness.ts';
import { commentEvent, minute } from '../worker/event-builder.ts';

/**
 * The web app's own script, as an app would write it with the client package: what it gets from
 * the tray service (counts, a mute and its removal: calls a browser preflights), or how it failed;
 * and a live stream whose events it keeps in `window.seen`.
 */
const APP_JS = `
import { createTrayClient } from '/client/index.js';
window.callTray = async (baseUrl, token) => {
  const tray = createTrayClient({ baseUrl, getToken: () => token, retries: 0 });
  try {
    const counts = await tray.counts();
    const muted = await tray.mute({ targetType: 'post', targetId: 'p-muted' });
    const unmuted = await tray.unmute({ targetType: 'post', targetId: 'p-muted' });
    return { counts, muted: { targetId: muted.targetId, until: muted.until }, unmuted };
  } catch (error) {
    return { failed: { name: error.name, message: error.message } };
  }
};
window.seen = [];
window.streamTray = (baseUrl, token) => {
  const tray = createTrayClient({ baseUrl, getToken: () => token });
  void (async () => {
    for await (const { event, data } of tray.stream({ signal: new AbortController().signal })) {
      window.seen.push(event === 'record' ? 'record ' + data.targetId : event);
    }
  })();
};
`;

/** A web app of its own origin: its page and script, and the client package's built modules under /client/. */
async function serveWebApp(): Promise<{ server: Server; origin: string }> {
  const app = express();
  app.use('/client', express.static(clientDistDir));
  app.get('/app.js', (_req, res) => {
    res.type('text/javascript').send(APP_JS);
  });
  app.get('/', (_req, res) => {
    res
      .type('html')
      .send('<!doctype html><title>an app</title><script type="module" src="/app.js"></script>');
  });
  const server = await listen(app, { port: 0, host: '127.0.0.1' });
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

interface PageResult {
  counts?: unknown;
  muted?: unknown;
  unmuted?: unknown;
  failed?: { name: string; message: string };
}

/** Runs `call(args)` of the page's script (APP_JS) in the page. */
const inPage = <T>(page: Page, call: string, ...args: string[]): Promise<T> =>
  page.evaluate(`window.${call}(${args.map((arg) => JSON.stringify(arg)).join(', ')})`) as Promise<T>;

// What only a browser decides: whether a page of another origin may call the tray service and
// read its answers, live stream included (TRAY_CORS_ORIGINS). Both pages run the client package.
describe('the tray API from web apps of other origins, in a real browser (headless Chromium)', function () {
  this.timeout(90_000);
  const user = 'u-cors-page';
  const corsOrigins: string[] = [];
  let listed: { server: Server; origin: string };
  let unlisted: { server: Server; origin: string };
  before(async () => {
    await buildClient();
    listed = await serveWebApp();
    unlisted = await serveWebApp();
    // Read by the harness's own before, which runs after this one.
    corsOrigins.push(listed.origin);
  });
  const tray = useLiveTray({ instances: 1, corsOrigins });
  let dir: string;
  let context: BrowserContext;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cors-browser-'));
    context = await launchLocalChromium(join(dir, 'profile'));
    await tray.worker.deliver(
      commentEvent({
        postId: 'p-c1',
        postOwner: user,
        author: 'u-cid',
        commentId: 'cm-c1',
        createdAt: minute(1),
      }),
    );
  });
  after(async () => {
    await context?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    for (const app of [listed, unlisted]) if (app) await closeServer(app.server, 100);
  });

  const open = async (origin: string) => {
    const page = await context.newPage();
    await page.goto(`${origin}/`);
    await page.waitForFunction('typeof window.callTray === "function"');
    return page;
  };

  it('lets a listed origin call the API, preflighted calls included', async () => {
    const page = await open(listed.origin);
    const result = await inPage<PageResult>(page, 'callTray', tray.instance(0).base, await tokenFor(user));
    expect(result).to.deep.equal({
      counts: { totalUnreadCount: 1, totalUnseenCount: 1 },
      muted: { targetId: 'p-muted', until: null },
      unmuted: true,
    });
  });

  it('streams to a listed origin: the counts at once, then a record delivered while it is open', async () => {
    const page = await open(listed.origin);
    await inPage(page, 'streamTray', tray.instance(0).base, await tokenFor(user));
    await page.waitForFunction('window.seen.includes("unread")');
    await tray.worker.deliver(
      commentEvent({
        postId: 'p-c2',
        postOwner: user,
        author: 'u-eve',
        commentId: 'cm-c2',
        createdAt: minute(2),
      }),
    );
    await page.waitForFunction('window.seen.includes("record p-c2")', undefined, { timeout: 10_000 });
  });

  it('keeps the answers from a page of an origin not listed: the call fails in the browser', async () => {
    const page = await open(unlisted.origin);
    const result = await inPage<PageResult>(page, 'callTray', tray.instance(0).base, await tokenFor(user));
    expect(result.failed?.name, JSON.stringify(result)).to.equal('TypeError');
  });
});

import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import request from 'supertest';
import { buildClient } from '../../support/build-client.ts';
import { launchLocalChromium } from '../../../scripts/lib/local-chromium.ts';
import { bearer, tokenFor } from '../api/support/api-harness.ts';
import { useLiveTray } from '../live/support/live-harness.ts';
import { commentEvent, minute } from '../worker/event-builder.ts';
import { jobDataOf } from '../worker/worker-harness.ts';
import { encodeStreamCursor, freshCursor } from '../../../tray-service/live/stream-cursor.ts';
import { webhookJobOptions } from '../../../shared/queue/webhook-queue.ts';
import { createLogger } from '../../../shared/logging/create-logger.ts';
import { startSnoozeWakeLoop, type SnoozeWakeLoop } from '../../../tray-service/worker/snooze-wake-loop.ts';

describe('GET /demo in a real browser (headless Chromium)', function () {
  this.timeout(90_000);
  // Before the harness builds the app: the demo serves the client's modules as they are built.
  before(() => buildClient());
  const tray = useLiveTray({ instances: 1, demo: true });
  const user = 'u-demo';
  /** Changes made through the tray API while a page is open, as another client of the user's would. */
  const changes = {
    archive: async (user: string, id: string) =>
      request(tray.instance(0).base)
        .post('/notifications/v3/records/archive')
        .set('Authorization', await bearer(user))
        .send({ ids: [id] })
        .expect(200),
    snooze: async (user: string, id: string) =>
      request(tray.instance(0).base)
        .post('/notifications/v3/records/snooze')
        .set('Authorization', await bearer(user))
        .send({ ids: [id], until: Date.now() + 3_600_000 })
        .expect(200),
    'delete-all': async (user: string) =>
      request(tray.instance(0).base)
        .delete('/notifications/v3/delete-all')
        .set('Authorization', await bearer(user))
        .expect(200),
  };
  let context: BrowserContext;
  let page: Page;
  let dir: string;
  const cspViolations: string[] = [];
  const scripts: string[] = [];
  /** Waits until the unread badge shows `count`. */
  const badge = (count: string, timeout: number) =>
    page.locator('#badge', { hasText: new RegExp(`^${count}$`) }).waitFor({ timeout });

  before(async () => {
    // One record before the page opens: the tray shows it from history, rendered.
    await tray.worker.deliver(
      commentEvent({
        postId: 'p-d1',
        postOwner: user,
        author: 'u-cid',
        commentId: 'cm-d1',
        createdAt: minute(1),
      }),
    );
    dir = mkdtempSync(join(tmpdir(), 'demo-browser-'));
    context = await launchLocalChromium(join(dir, 'profile'));
    page = await context.newPage();
    page.on('request', (sent) => {
      if (sent.resourceType() === 'script') scripts.push(new URL(sent.url()).pathname);
    });
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
  });
  after(async () => {
    await context?.close();
    // The screenshot stays for the reader; only the browser profile goes.
    if (dir) rmSync(join(dir, 'profile'), { recursive: true, force: true });
  });

  it('shows the tray with rendered descriptions and the unread badge once a token is pasted', async () => {
    const response = await page.goto(`${tray.instance(0).base}/demo`);
    expect(response?.status()).to.equal(200);
    expect(response?.headers()['content-security-policy']).to.include("script-src 'self'");
    await page.fill('#token', await tokenFor(user));
    await page.click('button[type=submit]');
    await page.getByText('Live:').waitFor({ timeout: 10_000 });
    await page.locator('#records li').first().waitFor({ timeout: 5_000 });
    expect(await page.locator('#records li').count()).to.equal(1);
    expect(await page.locator('#records li .description').first().innerText()).to.equal(
      'Cid commented on your post in Hiking Club',
    );
    await badge('1', 5_000);
    // Calls and the live tray come from the client package's built modules, not from a copy in the page.
    expect(scripts).to.include.members([
      '/demo/demo.js',
      '/demo/client/create-tray-client.js',
      '/demo/client/stream/open-tray-stream.js',
    ]);
  });

  it('shows a queued webhook event within 2 s without a reload', async () => {
    const envelope = commentEvent({
      postId: 'p-d2',
      postOwner: user,
      author: 'u-eve',
      commentId: 'cm-d2',
      createdAt: minute(2),
    });
    await tray.worker.queue.add(jobDataOf(envelope), { ...webhookJobOptions, jobId: 'demo-d2' });
    // The bound is the wait's own: a record later than 2 s fails it.
    await page.locator('#records li[data-id="comment_p-d2_u-demo"]').waitFor({ timeout: 2_000 });
    await badge('2', 2_000);
    expect(await page.locator('#records li').count()).to.equal(2);
  });

  it('marks a record read and the badge follows, through the stream', async () => {
    await page.click('#records li[data-id="comment_p-d2_u-demo"] button.mark-read');
    await badge('1', 2_000);
    await page.locator('#records li.read[data-id="comment_p-d2_u-demo"]').waitFor({ timeout: 2_000 });
  });

  it('switches the locale and renders the descriptions again', async () => {
    await page.selectOption('#locale', 'de');
    await page.getByText('Live:').waitFor({ timeout: 10_000 });
    // The same records, described in German.
    await page.locator('#records li .description', { hasText: 'Cid' }).waitFor({ timeout: 5_000 });
    await page.locator('#records li .description', { hasText: 'commented on' }).first().waitFor({
      state: 'detached',
      timeout: 5_000,
    });
    const screenshot = join(dir, 'demo-page.png');
    await page.selectOption('#locale', 'en');
    await page.getByText('Cid commented on your post in Hiking Club').waitFor({ timeout: 5_000 });
    await page.screenshot({ path: screenshot, fullPage: true });
    process.stdout.write(`      screenshot: ${screenshot}\n`);
  });

  describe('the inbox', () => {
    const item = (id: string) => page.locator(`#records li[data-id="${id}"]`);
    const unseen = (count: string) =>
      page.locator('#unseen', { hasText: new RegExp(`^${count}$`) }).waitFor({ timeout: 5_000 });
    const [d1, d2] = [`comment_p-d1_${user}`, `comment_p-d2_${user}`];
    // What every tray process runs: ended snoozes come back through the live streams.
    let wakeLoop: SnoozeWakeLoop | undefined;
    before(() => {
      wakeLoop = startSnoozeWakeLoop({
        storage: tray.worker.storage,
        changes: tray.changes,
        logger: createLogger({ name: 'test', level: 'silent' }),
        intervalMs: 250,
      });
    });
    after(() => wakeLoop?.stop());

    it('shows the unseen count, and "Mark all seen" clears it through the stream', async () => {
      // The record marked read is seen too; the first one is neither.
      await unseen('1');
      await page.locator('#records li.unseen').first().waitFor({ timeout: 2_000 });
      await page.click('#mark-seen');
      await unseen('0');
      await page.locator('#records li.unseen').first().waitFor({ state: 'detached', timeout: 2_000 });
      // Seen is not read.
      await badge('1', 2_000);
    });

    it("mutes a record's post, and unmutes it", async () => {
      const mutes = async () =>
        (
          (
            await request(tray.instance(0).base)
              .get('/notifications/v3/mutes')
              .set('Authorization', await bearer(user))
              .expect(200)
          ).body as { data: { targetType: string; targetId: string }[] }
        ).data.map(({ targetType, targetId }) => `${targetType}:${targetId}`);
      await item(d2).locator('button.mute').click();
      await item(d2).locator('button.unmute').waitFor({ timeout: 5_000 });
      expect(await mutes()).to.deep.equal(['post:p-d2']);
      await item(d2).locator('button.unmute').click();
      await item(d2).locator('button.mute').waitFor({ timeout: 5_000 });
      expect(await mutes()).to.deep.equal([]);
    });

    it('archives a record: it leaves the inbox and the unread count', async () => {
      await item(d1).locator('button.archive').click();
      await item(d1).waitFor({ state: 'detached', timeout: 5_000 });
      await badge('0', 2_000);
    });

    it('snoozes a record for 5 s: it leaves the inbox, then comes back unread and unseen', async () => {
      const snoozed = Date.now();
      await item(d2).locator('button.snooze').click();
      await item(d2).waitFor({ state: 'detached', timeout: 5_000 });
      await item(d2).waitFor({ timeout: 10_000 });
      expect(Date.now() - snoozed).to.be.at.least(4_500);
      expect((await item(d2).getAttribute('class'))?.split(' ')).to.include.members(['unread', 'unseen']);
      await badge('1', 2_000);
      await unseen('1');
    });
  });

  describe('opening another tray on the same page', () => {
    const [one, two] = ['u-one', 'u-two'];
    const submit = (on: Page) => on.click('#connect button[type=submit]');
    let other: Page;
    before(async () => {
      // u-one has one unread record; u-two has none.
      await tray.worker.deliver(
        commentEvent({
          postId: 'p-o1',
          postOwner: one,
          author: 'u-cid',
          commentId: 'cm-o1',
          createdAt: minute(1),
        }),
      );
    });
    beforeEach(async () => {
      other = await context.newPage();
    });
    afterEach(() => other.close());

    it('never shows an answer for the tray opened before, however late it comes', async () => {
      const first = await tokenFor(one);
      const fromFirst = (headers: Record<string, string>) => headers.authorization === `Bearer ${first}`;
      // u-one's history is held until u-two's tray is open.
      let asked: () => void = () => undefined;
      const requested = new Promise<void>((resolve) => (asked = resolve));
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      await other.route('**/notifications/v3/history*', async (route) => {
        if (fromFirst(route.request().headers())) {
          asked();
          await held;
        }
        await route.continue();
      });
      await other.goto(`${tray.instance(0).base}/demo`);
      await other.fill('#token', first);
      await submit(other);
      await requested;
      await other.fill('#token', await tokenFor(two));
      await submit(other);
      await other.locator('#mark-all:enabled').waitFor({ timeout: 10_000 });
      const late = other.waitForResponse(
        (response) => response.url().includes('/history') && fromFirst(response.request().headers()),
      );
      release();
      await late;
      // The old page renders within a task of its answer; a second is ample to show it if it did.
      const shown = await other
        .locator('#records li')
        .first()
        .waitFor({ timeout: 1_000 })
        .then(
          () => true,
          () => false,
        );
      expect(shown, "u-one's record on u-two's tray").to.equal(false);
    });

    it("clears the previous user's tray, badges and buttons when the next one is refused", async () => {
      await other.goto(`${tray.instance(0).base}/demo`);
      await other.fill('#token', await tokenFor(one));
      await submit(other);
      await other.locator('#records li').first().waitFor({ timeout: 10_000 });
      await other.locator('#badge', { hasText: /^1$/ }).waitFor({ timeout: 5_000 });
      await other.locator('#mark-all:enabled').waitFor({ timeout: 5_000 });
      await other.fill('#token', 'not-a-token');
      await submit(other);
      await other.getByText('Could not load the tray').waitFor({ timeout: 10_000 });
      const left = {
        records: await other.locator('#records li').count(),
        badge: await other.locator('#badge').innerText(),
        unseen: await other.locator('#unseen').innerText(),
        markAll: await other.locator('#mark-all').isEnabled(),
        markSeen: await other.locator('#mark-seen').isEnabled(),
      };
      expect(left).to.deep.equal({ records: 0, badge: '0', unseen: '0', markAll: false, markSeen: false });
    });
  });

  describe('a change the stream announces while the history answer is on its way', () => {
    let other: Page;
    const errors: string[] = [];
    beforeEach(async () => {
      other = await context.newPage();
      other.on('pageerror', (error) => errors.push(error.message));
    });
    afterEach(() => other.close());
    afterEach(() => {
      expect(errors.splice(0), 'uncaught errors on the page').to.deep.equal([]);
    });

    /** Opens `user`'s tray with the history answer read by the service at once but held on its way to the page. */
    async function openHeld(user: string): Promise<() => Promise<void>> {
      let read: () => void = () => undefined;
      const historyRead = new Promise<void>((resolve) => (read = resolve));
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      // A slow network: the page the service read holds the record as it was before the change.
      await other.route('**/notifications/v3/history*', async (route) => {
        const response = await route.fetch();
        read();
        await held;
        await route.fulfill({ response });
      });
      await other.goto(`${tray.instance(0).base}/demo`);
      await other.fill('#token', await tokenFor(user));
      await other.click('#connect button[type=submit]');
      await historyRead;
      await other.getByText('Live:').waitFor({ timeout: 10_000 });
      return async () => {
        release();
        // Enabled once the history answer is shown (open() in demo.js).
        await other.locator('#mark-all:enabled').waitFor({ timeout: 10_000 });
      };
    }

    for (const [change, make] of Object.entries(changes)) {
      it(`does not bring back a record the stream said left the inbox (${change})`, async () => {
        const user = `u-late-${change}`;
        const id = `comment_p-l1_${user}`;
        await tray.worker.deliver(
          commentEvent({
            postId: 'p-l1',
            postOwner: user,
            author: 'u-cid',
            commentId: 'cm-l1',
            createdAt: minute(1),
          }),
        );
        const show = await openHeld(user);
        await make(user, id);
        // The stream sends the counts after the change itself: the page has applied it.
        await other.locator('#badge', { hasText: /^0$/ }).waitFor({ timeout: 5_000 });
        await show();
        expect(await other.locator(`#records li[data-id="${id}"]`).count()).to.equal(0);
      });
    }

    it('shows a record the stream marked read as read, and one it marked seen as seen', async () => {
      const user = 'u-late-marks';
      const [read, seen] = [`comment_p-l2_${user}`, `comment_p-l3_${user}`];
      for (const postId of ['p-l2', 'p-l3'])
        await tray.worker.deliver(
          commentEvent({
            postId,
            postOwner: user,
            author: 'u-cid',
            commentId: `cm-${postId}`,
            createdAt: minute(1),
          }),
        );
      const show = await openHeld(user);
      const authorization = await bearer(user);
      await request(tray.instance(0).base)
        .post('/notifications/v2/read')
        .set('Authorization', authorization)
        .send({ verb: 'comment', targetId: 'p-l2' })
        .expect(200);
      await request(tray.instance(0).base)
        .post('/notifications/v3/records/seen')
        .set('Authorization', authorization)
        .send({ ids: [seen] })
        .expect(200);
      await other.locator('#unseen', { hasText: /^0$/ }).waitFor({ timeout: 5_000 });
      await show();
      // `fresh` (the page's highlight of what the stream sent) aside: a mark of a record stamped
      // moments before the stream opened may come as the record with the mark in it, since its
      // client may not have it (docs/live-tray.md, the stream's floor).
      const classes = async (id: string) =>
        ((await other.locator(`#records li[data-id="${id}"]`).getAttribute('class')) ?? '')
          .split(' ')
          .filter((name) => name !== 'fresh')
          .sort();
      expect(await classes(read)).to.deep.equal(['read']);
      expect(await classes(seen)).to.deep.equal(['unread']);
    });

    it('reloads the history on reset, and says so when that reload fails', async () => {
      const user = 'u-late-reset';
      await tray.worker.deliver(
        commentEvent({
          postId: 'p-l4',
          postOwner: user,
          author: 'u-cid',
          commentId: 'cm-l4',
          createdAt: minute(1),
        }),
      );
      // The first stream resumes from an id older than the replay window: the service sends reset.
      const old = encodeStreamCursor(freshCursor(Date.now() - 2 * 24 * 3_600_000));
      let resumed = false;
      await other.route('**/notifications/v3/stream?*', async (route) => {
        const headers = resumed
          ? route.request().headers()
          : { ...route.request().headers(), 'last-event-id': old };
        resumed = true;
        await route.continue({ headers });
      });
      // The opening read is held until the reset's read is asked for; that one the service refuses.
      let asked: () => void = () => undefined;
      const reloadAsked = new Promise<void>((resolve) => (asked = resolve));
      let reads = 0;
      await other.route('**/notifications/v3/history*', async (route) => {
        if (++reads === 1) {
          await reloadAsked;
          await route.continue();
          return;
        }
        asked();
        const url = new URL(route.request().url());
        url.searchParams.set('view', 'not-a-view');
        await route.continue({ url: url.href });
      });
      await other.goto(`${tray.instance(0).base}/demo`);
      await other.fill('#token', await tokenFor(user));
      const opening = other.waitForResponse(
        (response) => response.url().includes('/history') && response.status() === 200,
      );
      await other.click('#connect button[type=submit]');
      await other.getByText('Could not load the tray').waitFor({ timeout: 10_000 });
      // The opening read's answer, older than the reset, is not shown either.
      await opening;
      expect(await other.locator('#records li').count()).to.equal(0);
      expect(await other.locator('#mark-all').isEnabled()).to.equal(false);
    });
  });

  describe('opening a tray that fails part-way', () => {
    const reader = 'u-part';
    const submit = (on: Page) => on.click('#connect button[type=submit]');
    let other: Page;
    before(() =>
      tray.worker.deliver(
        commentEvent({
          postId: 'p-pt1',
          postOwner: reader,
          author: 'u-cid',
          commentId: 'cm-pt1',
          createdAt: minute(1),
        }),
      ),
    );
    beforeEach(async () => {
      other = await context.newPage();
    });
    afterEach(() => other.close());

    it('shows no records when the mutes cannot be read, though the history answers after', async () => {
      // A query GET v3/mutes refuses (400): the page's read of the mutes fails, nothing else does.
      await other.route('**/notifications/v3/mutes', (route) => {
        const url = new URL(route.request().url());
        url.searchParams.set('unexpected', '1');
        return route.continue({ url: url.href });
      });
      await other.goto(`${tray.instance(0).base}/demo`);
      await other.fill('#token', await tokenFor(reader));
      await submit(other);
      await other.getByText('Could not load the tray').waitFor({ timeout: 10_000 });
      // The aborted stream's end let a history read start, answered within milliseconds here: two
      // seconds are ample to show it if the page did.
      const shown = await other
        .locator('#records li')
        .first()
        .waitFor({ timeout: 2_000 })
        .then(
          () => true,
          () => false,
        );
      expect(shown, 'a record under "Could not load the tray"').to.equal(false);
      expect(await other.getByText('Could not load the tray').count()).to.equal(1);
    });

    /**
     * Opens `user`'s tray page with the stream's ticket held until the returned release: the
     * history is read without the stream, after the page's wait for its first event.
     */
    async function openTicketHeld(user: string): Promise<() => void> {
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      await other.route('**/notifications/v3/stream-ticket', async (route) => {
        await held;
        await route.continue();
      });
      await other.goto(`${tray.instance(0).base}/demo`);
      await other.fill('#token', await tokenFor(user));
      return release;
    }

    it('reads the history again at the first event of a stream that took longer than the wait for it', async () => {
      // The stream's ticket is held until the history was read without it, and a record was
      // stored after that read and before the stream subscribed: no event brings that record.
      const release = await openTicketHeld(reader);
      const firstRead = other.waitForResponse((response) => response.url().includes('/history'), {
        timeout: 15_000,
      });
      await submit(other);
      await firstRead;
      await other.locator('#records li').first().waitFor({ timeout: 5_000 });
      await tray.worker.deliver(
        commentEvent({
          postId: 'p-pt2',
          postOwner: reader,
          author: 'u-dee',
          commentId: 'cm-pt2',
          createdAt: minute(2),
        }),
      );
      release();
      await other.locator('#records li', { hasText: 'Dee' }).waitFor({ timeout: 10_000 });
      expect(await other.locator('#records li').count()).to.equal(2);
    });

    it('drops what the second read no longer holds: a record archived between the two reads', async () => {
      const late = 'u-late-reads';
      const id = `comment_p-lr1_${late}`;
      await tray.worker.deliver(
        commentEvent({
          postId: 'p-lr1',
          postOwner: late,
          author: 'u-cid',
          commentId: 'cm-lr1',
          createdAt: minute(1),
        }),
      );
      const release = await openTicketHeld(late);
      await submit(other);
      await other.locator(`#records li[data-id="${id}"]`).waitFor({ timeout: 10_000 });
      // Archived before the stream subscribed: no event of it will ever say so.
      await changes.archive(late, id);
      const secondRead = other.waitForResponse((response) => response.url().includes('/history'), {
        timeout: 15_000,
      });
      release();
      await secondRead;
      await other.locator(`#records li[data-id="${id}"]`).waitFor({ state: 'detached', timeout: 5_000 });
    });
  });

  // Mocha runs a suite's own tests before its nested suites: this one comes after all of them.
  describe('after every interaction', () => {
    it('ran under the Content-Security-Policy without a violation', () => {
      expect(cspViolations).to.deep.equal([]);
    });
  });
});

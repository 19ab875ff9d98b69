import { expect } from 'chai';
import { readFileSync, rmSync } from 'node:fs';
import type { Page } from 'playwright-core';
import request from 'supertest';
import { createLogger } from '../../../../shared/logging/create-logger.ts';
import { createRedis, type RedisClient } from '../../../../shared/redis/create-redis.ts';
import { toDecisionDoc } from '../../../../tray-service/domain/decision-doc.ts';
import { createEventAnnouncer } from '../../../../tray-service/admin/event-announcer.ts';
import { storedEventsChannel } from '../../../../tray-service/admin/stored-events-channel.ts';
import { signedHeaders } from '../../../receiver/support/signed-request.ts';
import { startTestReceiver, type TestReceiver } from '../../../receiver/support/use-receiver.ts';
import { uniqueName } from '../../../support/suite-resources.ts';
import { testStack } from '../../../support/test-stack.ts';
import {
  commentEvent,
  dedupeKeyOf,
  membershipEvent,
  minute,
  postEvent,
  type TestEnvelope,
} from '../../worker/event-builder.ts';
import { useWorker } from '../../worker/worker-harness.ts';
import { adminApp } from '../admin-fixtures.ts';
import {
  attributes,
  eventually,
  holdAnswers,
  expectAccessible,
  openConsole,
  screenshot,
  useConsoleBrowser,
  useListening,
} from './console-browser.ts';

/** The bound the console promises between a webhook's acknowledgement and its row in the live tail. */
const TAIL_BOUND_MS = 2_000;
const STREAM_PREFIX = uniqueName('console-tail');

describe('events console in a real browser: a real receiver and worker behind it (live tail, replay, export)', function () {
  this.timeout(120_000);
  const browser = useConsoleBrowser();
  let redis: RedisClient | undefined;
  // The worker announces each event once applied, as tray-service/main.ts wires it.
  const worker = useWorker({
    announce: (event) =>
      createEventAnnouncer(redis!, STREAM_PREFIX, createLogger({ name: 'test', level: 'silent' }))(event),
  });
  let receiver: TestReceiver;
  let closeApp: () => void;
  const base = useListening(() => {
    const admin = adminApp(worker.storage, {
      streamPrefix: STREAM_PREFIX,
      queues: [worker.queue],
      // c-hike's events (three at the start) are too many for an export; a single post is not.
      deps: { exportMaxRows: 2 },
    });
    closeApp = admin.close;
    return admin.app;
  });
  let page: Page;

  /** Posts a signed delivery to the receiver; resolves at its acknowledgement (200 {}). */
  async function send(envelope: TestEnvelope): Promise<{ key: string; ackedAt: number }> {
    const body = JSON.stringify(envelope);
    await request(receiver.app).post('/webhooks').set(signedHeaders(body)).send(body).expect(200);
    return { key: dedupeKeyOf(envelope), ackedAt: Date.now() };
  }
  /** Waits until the worker applied each key. */
  async function applied(keys: string[]): Promise<void> {
    await eventually(
      async () =>
        (await Promise.all(keys.map((key) => worker.storage.events.get(key)))).every((e) => e?.appliedAt),
      true,
      20_000,
    );
  }
  const rowKeys = () => attributes(page.locator('#events-rows tr'), 'data-key');

  const join = membershipEvent('join', ['u-bo', 'u-cy'], 'c-hike', minute(0));
  const post = postEvent({ author: 'u-ana', postId: 'p-live', createdAt: minute(1) });
  const comment = commentEvent({
    author: 'u-cid',
    postId: 'p-live',
    postOwner: 'u-ana',
    commentId: 'cm-live',
    createdAt: minute(2),
  });
  const keys = { join: dedupeKeyOf(join), post: dedupeKeyOf(post), comment: dedupeKeyOf(comment) };

  before(async function () {
    this.timeout(60_000);
    redis = createRedis(testStack().redisUrl);
    // The receiver queues on the worker's queue, as both services do on one Redis.
    receiver = await startTestReceiver(worker.prefix);

    // A community with two members, a post there, and a comment that a moderator flagged.
    await send(join);
    await applied([keys.join]);
    await send(post);
    await send(comment);
    await applied([keys.post, keys.comment]);
    const stored = await worker.storage.events.get(keys.comment);
    await worker.storage.decisions.saveAll([
      toDecisionDoc(
        stored!,
        'blocked-words',
        {
          action: 'flag',
          reason: 'blocklisted words: "spam"',
          subject: { type: 'comment', id: 'cm-live' },
          userId: 'u-cid',
        },
        { now: new Date(), delivery: 'off' },
      ),
    ]);
    page = await browser().page();
    await openConsole(page, base());
  });
  after(async () => {
    await page?.close();
    closeApp?.();
    if (receiver) {
      await receiver.close();
      rmSync(receiver.spoolDir, { recursive: true, force: true });
    }
    redis?.disconnect();
  });

  it('filters by the acting user, the community and the moderation outcome', async () => {
    const filter = async (field: string, value: string, expected: string[]) => {
      await page.goto(`${base()}/admin/console#/events?${field}=${encodeURIComponent(value)}`);
      await eventually(async () => (await rowKeys()).sort(), [...expected].sort());
    };
    await filter('userId', 'u-cid', [keys.comment]);
    await filter('moderation', 'flag', [keys.comment]);
    await filter('moderation', 'none', [keys.join, keys.post]);
    await filter('communityId', 'c-hike', [keys.join, keys.post, keys.comment]);
    await page.selectOption('#f-moderation', 'any');
    await page.click('#events-filter button[type=submit]');
    await eventually(rowKeys, [keys.comment]);
    expect(new URL(page.url()).hash).to.equal('#/events?communityId=c-hike&moderation=any');
  });

  it('opens a community post: its activity, the members it reached, no decision', async () => {
    await page.goto(`${base()}/admin/console#/events`);
    await page.click(`#events-rows button[data-key="${keys.post}"]`);
    await page.locator('#detail-title', { hasText: 'post.didCreate event' }).waitFor();
    const activity = await page.locator('#detail-activities tr').first().innerText();
    expect(activity).to.include('post').and.include('community c-hike');
    await page
      .locator('#detail-recipients-total', { hasText: '2 users whose tray this event changed.' })
      .waitFor();
    expect(await page.locator('#detail-recipients-total').innerText()).to.include(
      'Community c-hike: every member at',
    );
    expect(await page.locator('#detail-recipients li').allInnerTexts()).to.deep.equal(['u-bo', 'u-cy']);
    expect(await page.locator('#detail-decisions').innerText()).to.include('None.');
    await expectAccessible(page, 'the event detail');
    await screenshot(page, 'detail');
  });

  it('replays one event from its detail', async () => {
    await page.click('#detail-replay');
    await page.locator('#detail-replay-status', { hasText: 'Replayed: applied.' }).waitFor();
    await page.keyboard.press('Escape');
  });

  it('shows a freshly signed webhook in the live tail within 2 s of its acknowledgement', async () => {
    await page.goto(`${base()}/admin/console#/events`);
    await eventually(rowKeys, [keys.comment, keys.post, keys.join]);
    await page.check('#tail-toggle');
    await page.locator('#tail-state', { hasText: 'Live tail on' }).waitFor();
    const fresh = commentEvent({
      author: 'u-eve',
      postId: 'p-live',
      postOwner: 'u-ana',
      commentId: 'cm-fresh',
      createdAt: minute(3),
    });
    const { key, ackedAt } = await send(fresh);
    // Bounded from the acknowledgement: the wait starts a little after it.
    await page
      .locator(`#events-rows tr[data-key="${key}"]`)
      .waitFor({ timeout: Math.max(1, TAIL_BOUND_MS - (Date.now() - ackedAt)) });
    expect((await rowKeys())[0]).to.equal(key);
    await page
      .locator('#tail-log', { hasText: 'New event: comment.didCreate' })
      .waitFor({ state: 'attached' });
    await expectAccessible(page, 'the Events view with the live tail on');
    await screenshot(page, 'events');
    await page.uncheck('#tail-toggle');
  });

  // Apply filters with the tail on: the list is asked for, and the tail restarts at once. An event
  // stored after the server read the list, and shown by the tail before the list arrived, is in
  // neither unless the list keeps it.
  it('keeps the events the live tail showed while the list of a new filter was on its way', async () => {
    await page.goto(`${base()}/admin/console#/events`);
    await page.locator('#events-rows tr').first().waitFor();
    await page.check('#tail-toggle');
    await page.locator('#tail-state', { hasText: 'Live tail on' }).waitFor();
    const held = await holdAnswers(page, '**/admin/events?*');
    try {
      await page.fill('#f-user', 'u-fay');
      await page.click('#events-filter button[type=submit]');
      await held.asked;
      await page.locator('#tail-state', { hasText: 'Live tail on' }).waitFor();
      const { key } = await send(
        commentEvent({
          author: 'u-fay',
          postId: 'p-live',
          postOwner: 'u-ana',
          commentId: 'cm-during',
          createdAt: minute(4),
        }),
      );
      await page.locator(`#events-rows tr[data-key="${key}"]`).waitFor();
      held.release();
      await eventually(() => page.locator('#events-older').isEnabled(), true);
      expect(await rowKeys()).to.deep.equal([key]);
      expect(await page.locator('#events-count').innerText()).to.equal('Showing 1 event.');
    } finally {
      await held.stop();
    }
    await page.uncheck('#tail-toggle');
  });

  it('keeps the newest 500 rows however long the live tail runs, and says older ones left the page', async () => {
    await page.goto(`${base()}/admin/console#/events`);
    await page.locator('#events-rows tr').first().waitFor();
    await page.check('#tail-toggle');
    await page.locator('#tail-state', { hasText: 'Live tail on' }).waitFor();
    // Announced straight on the channel, as a worker would: 600 more than the page keeps.
    const at = new Date().toISOString();
    for (let n = 0; n < 600; n += 1) {
      await redis!.publish(
        storedEventsChannel(STREAM_PREFIX),
        JSON.stringify({
          key: `cap-${n}`,
          event: 'post.didCreate',
          webhook: 'main',
          status: 'applied',
          receivedAt: at,
          storedAt: at,
          expiresAt: at,
          data: {},
        }),
      );
    }
    await page.locator('#events-rows tr[data-key="cap-599"]').waitFor();
    const shown = await rowKeys();
    expect(shown).to.have.lengthOf(500);
    expect([shown[0], shown.at(-1)]).to.deep.equal(['cap-599', 'cap-100']);
    expect(await page.locator('#events-count').innerText()).to.match(
      /^Showing the newest 500 events\b.*older/,
    );
    // Its cursor would skip the rows dropped: paging resumes from a fresh list.
    expect(await page.locator('#events-older').isHidden()).to.equal(true);
    await page.uncheck('#tail-toggle');
  });

  it('links the filter’s export as NDJSON and CSV, each holding exactly its events', async () => {
    await page.goto(`${base()}/admin/console#/export?event=post.didCreate`);
    await page.locator('#export-filter', { hasText: 'event = post.didCreate' }).waitFor();
    const ndjsonHref = await page.locator('#export-ndjson').getAttribute('href');
    const csvHref = await page.locator('#export-csv').getAttribute('href');
    expect(ndjsonHref).to.equal('/admin/events/export?format=ndjson&event=post.didCreate');
    // The page's own session: the request shares the browser's cookies.
    const ndjson = await page.request.get(`${base()}${ndjsonHref}`);
    expect(ndjson.status()).to.equal(200);
    const lines = (await ndjson.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { key: string });
    expect(lines.map((line) => line.key)).to.deep.equal([keys.post]);
    const csv = await page.request.get(`${base()}${csvHref}`);
    expect(csv.status()).to.equal(200);
    expect(csv.headers()['content-type']).to.match(/^text\/csv/);
    const rows = (await csv.text()).trim().split(/\r?\n/);
    expect(rows).to.have.lengthOf(2);
    expect(rows[1]).to.include(keys.post);
  });

  it('says why the service refuses an export instead of starting a download that fails, and downloads one it accepts', async () => {
    await page.goto(`${base()}/admin/console#/export?communityId=c-hike`);
    await page.locator('#export-filter', { hasText: 'community id = c-hike' }).waitFor();
    let downloads = 0;
    const counted = () => (downloads += 1);
    page.on('download', counted);
    await page.click('#export-csv');
    await page
      .locator('#export-error', { hasText: /^filter: matches more than 2 events, at most 2 per export/ })
      .waitFor({ timeout: 5_000 });
    page.off('download', counted);
    expect(downloads).to.equal(0);
    // Chromium logs the refused request; it is the one this test asked for.
    const refused = browser().problems.findIndex((problem) => /status of 400/.test(problem));
    expect(refused).to.be.at.least(0);
    browser().problems.splice(refused, 1);

    await page.goto(`${base()}/admin/console#/export?event=post.didCreate`);
    await page.locator('#export-filter', { hasText: 'event = post.didCreate' }).waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-ndjson')]);
    expect(download.suggestedFilename()).to.equal('events.ndjson');
    const lines = readFileSync((await download.path())!, 'utf8')
      .trim()
      .split('\n');
    expect(lines.map((line) => (JSON.parse(line) as { key: string }).key)).to.deep.equal([keys.post]);
    expect(await page.locator('#export-error').innerText()).to.equal('');
  });

  it('replays the filter’s events in the background and shows the progress to the end', async () => {
    await page.click('#replay-start');
    await page
      .locator('#replay-status', { hasText: 'Replay done: 1 of 1 replayed, 0 failed.' })
      .waitFor({ timeout: 20_000 });
    expect(await page.locator('#replay-bar').getAttribute('value')).to.equal('1');
    await expectAccessible(page, 'the Export and replay view');
    await screenshot(page, 'export');
  });

  it('pages the recipients of a post to a large community: the first 50, then the rest with "More recipients"', async () => {
    const members = Array.from({ length: 60 }, (_, i) => `u-m${String(i).padStart(2, '0')}`);
    const bigJoin = membershipEvent('join', members, 'c-big', minute(10));
    const bigPost = postEvent({
      author: 'u-ana',
      communityId: 'c-big',
      postId: 'p-big',
      createdAt: minute(11),
    });
    await send(bigJoin);
    await applied([dedupeKeyOf(bigJoin)]);
    const { key } = await send(bigPost);
    await applied([key]);
    await page.goto(`${base()}/admin/console#/events?communityId=c-big&event=post.didCreate`);
    await eventually(rowKeys, [key]);
    await page.click(`#events-rows button[data-key="${key}"]`);
    await page.locator('#detail-recipients-total', { hasText: '60 users' }).waitFor();
    const shown = () => page.locator('#detail-recipients li').allInnerTexts();
    expect(await shown()).to.deep.equal(members.slice(0, 50));
    await page.click('#detail-recipients-more');
    await eventually(shown, members);
    await page.locator('#detail-recipients-more').waitFor({ state: 'hidden' });
    await page.keyboard.press('Escape');

    // Paging again, then on to another event before the page arrives: it is the post's, and must
    // not be added to the other event's recipients.
    await page.click(`#events-rows button[data-key="${key}"]`);
    await eventually(shown, members.slice(0, 50));
    const held = await holdAnswers(page, '**/recipients?*');
    try {
      await page.click('#detail-recipients-more');
      await held.asked;
      await page.keyboard.press('Escape');
      await page.goto(`${base()}/admin/console#/events?communityId=c-big&event=community.didJoin`);
      await eventually(rowKeys, [dedupeKeyOf(bigJoin)]);
      await page.click(`#events-rows button[data-key="${dedupeKeyOf(bigJoin)}"]`);
      await page.locator('#detail-title', { hasText: 'community.didJoin event' }).waitFor();
      const before = await shown();
      held.release();
      await eventually(() => page.locator('#detail-recipients-more').isEnabled(), true);
      expect(await shown()).to.deep.equal(before);
      expect(before).to.not.include('u-m59');
    } finally {
      await held.stop();
    }
    await page.keyboard.press('Escape');
  });

  it('says why the server refuses the live tail: every tail of the admin open, then a session that ended', async () => {
    await page.goto(`${base()}/admin/console#/events`);
    await page.locator('#events-rows tr').first().waitFor();
    const before = browser().problems.length;
    // Every tail this admin may have on the instance (ADMIN_TAILS_PER_ADMIN, 10) is open elsewhere:
    // held from here with the browser's session (the browser itself opens at most 6 connections to
    // one server).
    const cookie = (await page.context().cookies()).map((entry) => `${entry.name}=${entry.value}`).join('; ');
    const held = new AbortController();
    try {
      for (let i = 0; i < 10; i += 1) {
        const tail = await fetch(`${base()}/admin/events/tail`, { headers: { cookie }, signal: held.signal });
        expect(tail.status).to.equal(200);
      }
      await page.check('#tail-toggle');
      const waiting = page.locator('#tail-state', { hasText: 'Live tail waiting' });
      await waiting.waitFor();
      const said = await waiting.innerText();
      expect(said).to.include('every open tail this admin may have on this instance is open');
      expect(said).to.include('Trying again in 15 s').and.not.to.include('sign in');
      expect(await page.isChecked('#tail-toggle')).to.equal(true);
    } finally {
      held.abort();
    }
    await page.uncheck('#tail-toggle');
    await page.locator('#tail-state', { hasText: 'Live tail off' }).waitFor();

    // The session ends (its cookie is gone): the tail says so, and stops.
    const cookies = await page.context().cookies();
    await page.context().clearCookies();
    try {
      // A click, not check(): the page may switch it off again before check() reads it back.
      await page.click('#tail-toggle');
      await page.locator('#tail-state', { hasText: 'your session has ended' }).waitFor();
      expect(await page.isChecked('#tail-toggle')).to.equal(false);
    } finally {
      await page.context().addCookies(cookies);
    }
    // Chromium logs the refused requests; they are the ones this test asked for.
    for (const problem of browser().problems.splice(before)) expect(problem).to.match(/\b(429|401)\b/);
  });

  it('refuses the console’s data to a browser without a session: 401 for the JSON, the sign-in for the page', async () => {
    // Plain requests, without the browser's cookie.
    for (const path of [
      '/admin/events',
      '/admin/events/tail',
      '/admin/stats/events-per-minute',
      `/admin/events/${keys.post}`,
    ]) {
      const response = await fetch(`${base()}${path}`, { redirect: 'manual' });
      expect(response.status, path).to.equal(401);
    }
    const replay = await fetch(`${base()}/admin/events/replay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(replay.status).to.equal(401);
    const pageLoad = await fetch(`${base()}/admin/console`, {
      redirect: 'manual',
      headers: { accept: 'text/html' },
    });
    expect(pageLoad.status).to.equal(303);
  });

  it('ran without a CSP violation or a script error', () => {
    expect(browser().problems).to.deep.equal([]);
  });
});

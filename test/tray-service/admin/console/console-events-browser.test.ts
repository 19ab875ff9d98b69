import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { useTrayStorage } from '../../../support/use-tray-storage.ts';
import { adminApp, eventDoc, storeEvents, type SeedEvent } from '../admin-fixtures.ts';
import {
  attributes,
  eventually,
  focused,
  expectAccessible,
  signIn,
  useConsoleBrowser,
  useListening,
} from './console-browser.ts';

const NAMES = ['post.didCreate', 'comment.didCreate', 'follow.didCreate'] as const;
const START = Date.UTC(2026, 10, 20, 10, 0, 0);

/** 60 events a minute apart: three names in turn, every fourth on the `backup` webhook. */
const seeds: SeedEvent[] = Array.from({ length: 60 }, (_, i) =>
  eventDoc({
    event: NAMES[i % 3],
    webhook: i % 4 === 0 ? 'backup' : 'main',
    status: i % 3 === 2 ? 'unknown' : 'stored',
    receivedAt: new Date(START + i * 60_000),
    data: { post: { postId: `p-${i}`, postedUserId: `u-${i % 5}`, text: `text ${i}` } },
  }),
);
/** Newest first, as the console lists them. */
const newestFirst = [...seeds].sort((a, b) => b.receivedAt.getTime() - a.receivedAt.getTime());
const keysOf = (events: readonly SeedEvent[]) => events.map((event) => event.key);

/** A browser, the tray's storage and an admin app serving the console on loopback, closed after. */
function useConsole(options: { maxLimit?: number } = {}) {
  const browser = useConsoleBrowser();
  const suite = useTrayStorage();
  let close: (() => void) | undefined;
  const base = useListening(() => {
    const admin = adminApp(suite.storage, options);
    close = admin.close;
    return admin.app;
  });
  after(() => close?.());
  return { browser, suite, base };
}

describe('events console in a real browser: the Events view', function () {
  this.timeout(120_000);
  const { browser, suite, base } = useConsole();
  let page: Page;

  const rowKeys = () => attributes(page.locator('#events-rows tr'), 'data-key');
  /** Waits until the list shows exactly `keys` (its rows arrive after the API answers). */
  const expectRows = (keys: string[]) => eventually(rowKeys, keys);
  /** Waits for the address's fragment to become `hash` (a view change is no navigation). */
  const expectHash = (hash: string) => eventually(async () => new URL(page.url()).hash, hash);

  before(async () => {
    await storeEvents(suite.storage, seeds);
    page = await browser().page();
  });

  it('sends a browser without a session to the sign-in form, and back to the console once signed in', async () => {
    await page.goto(`${base()}/admin/console`);
    expect(page.url()).to.equal(`${base()}/admin/login?next=%2Fadmin%2Fconsole`);
    await signIn(page, `${base()}/admin/console`);
    await expectRows(keysOf(newestFirst.slice(0, 25)));
    expect(await page.locator('#tab-events').getAttribute('aria-selected')).to.equal('true');
  });

  it('lists the stored events newest first, 25 at a time, and "Older" loads the next page until none is left', async () => {
    await page.click('#events-older');
    await expectRows(keysOf(newestFirst.slice(0, 50)));
    await page.click('#events-older');
    await expectRows(keysOf(newestFirst));
    await page.locator('#events-older').waitFor({ state: 'hidden' });
    expect(await page.locator('#events-count').innerText()).to.equal('Showing 60 events.');
    await expectAccessible(page, 'the Events view');
  });

  it('filters by event name and webhook, and keeps the filter in the address across a reload', async () => {
    await page.fill('#f-event', 'comment.didCreate');
    await page.fill('#f-webhook', 'backup');
    await page.click('#events-filter button[type=submit]');
    const expected = newestFirst.filter((e) => e.event === 'comment.didCreate' && e.webhook === 'backup');
    expect(expected.length).to.be.greaterThan(2);
    await expectRows(keysOf(expected));
    expect(new URL(page.url()).hash).to.equal('#/events?event=comment.didCreate&webhook=backup');
    await page.reload();
    await expectRows(keysOf(expected));
    expect(await page.inputValue('#f-event')).to.equal('comment.didCreate');
  });

  it('filters by status and by a time range given in the reader’s time zone', async () => {
    await page.click('#events-filter button[type=reset]');
    await expectRows(keysOf(newestFirst.slice(0, 25)));
    await page.selectOption('#f-status', 'unknown');
    // The browser runs in UTC: 10:10 to 10:20 local is 10:10Z (inclusive) to 10:20Z (exclusive).
    await page.fill('#f-since', '2026-11-20T10:10:00');
    await page.fill('#f-until', '2026-11-20T10:20:00');
    await page.click('#events-filter button[type=submit]');
    const since = START + 10 * 60_000;
    const until = START + 20 * 60_000;
    const expected = newestFirst.filter(
      (e) => e.status === 'unknown' && e.receivedAt.getTime() >= since && e.receivedAt.getTime() < until,
    );
    expect(expected).to.have.lengthOf(3);
    await expectRows(keysOf(expected));
    expect(new URL(page.url()).hash).to.include('since=2026-11-20T10%3A10%3A00.000Z');
  });

  it('moves between rows with the arrow keys, opens a detail with Enter and closes it with Escape', async () => {
    await page.click('#events-filter button[type=reset]');
    await expectRows(keysOf(newestFirst.slice(0, 25)));
    const [first, second] = newestFirst;
    await page.locator(`#events-rows button[data-key="${first!.key}"]`).focus();
    await page.keyboard.press('ArrowDown');
    expect(await focused(page, 'data-key')).to.equal(second!.key);
    await page.keyboard.press('Enter');
    const dialog = page.locator('#detail');
    await dialog.waitFor({ state: 'visible' });
    await page.locator('#detail-title', { hasText: `${second!.event} event` }).waitFor();
    expect(JSON.parse(await page.locator('#detail-payload').innerText())).to.deep.equal(second!.data);
    expect(await page.locator('#detail-summary').innerText()).to.include(second!.key);
    await expectAccessible(page, 'the event detail');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await focused(page, 'data-key')).to.equal(second!.key);
  });

  it('copies the pretty-printed payload with the Copy button', async () => {
    await browser().context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base() });
    const [first] = newestFirst;
    await page.click(`#events-rows button[data-key="${first!.key}"]`);
    await page.locator('#detail-title', { hasText: `${first!.event} event` }).waitFor();
    await page.click('#detail-copy');
    await page.locator('#detail-copy-status', { hasText: 'Payload copied.' }).waitFor();
    // Pretty-printed as stored: PostgreSQL's jsonb orders an object's keys its own way.
    const copied = String(await page.evaluate('navigator.clipboard.readText()'));
    expect(copied).to.equal(await page.locator('#detail-payload').innerText());
    expect(copied).to.include('\n  "post": {\n');
    expect(JSON.parse(copied)).to.deep.equal(first!.data);
    await page.click('#detail-close');
    await page.locator('#detail').waitFor({ state: 'hidden' });
    // Close gives the focus back to the row that opened the detail, in the dialog's close event,
    // which Chromium fires in a later task than the one that hid it.
    await eventually(() => focused(page, 'data-key'), first!.key);
  });

  it('moves between the views with the arrow keys, Home and End, as tabs', async () => {
    // From a fresh load: nothing the tests before left running in the page (the detail's close, the
    // clipboard) can take the focus back while this one moves it.
    await page.reload();
    await expectRows(keysOf(newestFirst.slice(0, 25)));
    await page.locator('#tab-events').focus();
    expect(await focused(page, 'id')).to.equal('tab-events');
    const selected = () => attributes(page.locator('[role=tab][aria-selected=true]'), 'id');
    await page.keyboard.press('ArrowRight');
    await expectHash('#/traffic');
    // The view follows on the fragment's hashchange event, just after the address changes.
    await eventually(selected, ['tab-traffic']);
    expect(await focused(page, 'id')).to.equal('tab-traffic');
    expect(await page.locator('#view-traffic').isVisible()).to.equal(true);
    expect(await page.locator('#view-events').isVisible()).to.equal(false);
    await page.keyboard.press('End');
    await expectHash('#/export');
    await eventually(selected, ['tab-export']);
    await page.keyboard.press('ArrowRight');
    await expectHash('#/events');
    await page.keyboard.press('ArrowLeft');
    await expectHash('#/export');
    await page.keyboard.press('Home');
    await expectHash('#/events');
    await eventually(selected, ['tab-events']);
  });

  it('signs out from the console: the session ends and the page sends the browser to the sign-in form again', async () => {
    await Promise.all([page.waitForURL(`${base()}/admin/logout`), page.click('a.sign-out')]);
    await Promise.all([page.waitForURL(/\/admin\/login/), page.click('button[type=submit]')]);
    await page.goto(`${base()}/admin/console`);
    expect(page.url()).to.equal(`${base()}/admin/login?next=%2Fadmin%2Fconsole`);
  });

  it('showed every view without a CSP violation, a script error or a failed request', async () => {
    expect(browser().problems).to.deep.equal([]);
  });
});

// An operator may allow smaller pages than the console's own (ADMIN_LIST_MAX_LIMIT below 25): the
// console asks for pages of that size rather than being refused (400) on every list.
describe('events console in a real browser, ADMIN_LIST_MAX_LIMIT below its page size', function () {
  this.timeout(120_000);
  const { browser, suite, base } = useConsole({ maxLimit: 10 });
  let page: Page;
  const rowKeys = () => attributes(page.locator('#events-rows tr'), 'data-key');

  before(async () => {
    await storeEvents(suite.storage, seeds);
    page = await browser().page();
  });

  it('lists the events 10 at a time, and "Older" loads the next 10', async () => {
    await page.goto(`${base()}/admin/console`);
    await signIn(page, `${base()}/admin/console`);
    await eventually(rowKeys, keysOf(newestFirst.slice(0, 10)));
    await page.click('#events-older');
    await eventually(rowKeys, keysOf(newestFirst.slice(0, 20)));
    expect(browser().problems).to.deep.equal([]);
  });
});

// Stored events are the senders' words: a webhook name, an id or a text holding markup must show
// as the characters it is, never become elements of the console (its policy would only block the
// scripts of markup that got in; the markup itself would still show).
describe('events console in a real browser, events holding markup', function () {
  this.timeout(120_000);
  const { browser, suite, base } = useConsole();
  const markup = `<img src="x" onerror="document.title='owned'"><b id="injected">bold</b>`;
  const hostile = eventDoc({
    event: 'post.didCreate',
    webhook: markup,
    receivedAt: new Date(START),
    data: { post: { postId: markup, postedUserId: `u-${markup}`, text: `</script>${markup}` } },
  });

  before(() => storeEvents(suite.storage, [hostile]));

  it('shows them as text in the list and the detail, adding no element', async () => {
    const page = await browser().page();
    await page.goto(`${base()}/admin/console`);
    await signIn(page, `${base()}/admin/console`);
    const row = page.locator(`#events-rows tr[data-key="${hostile.key}"]`);
    await row.waitFor();
    expect(await row.innerText()).to.include(markup);
    await page.click(`#events-rows button[data-key="${hostile.key}"]`);
    await page.locator('#detail-title', { hasText: 'post.didCreate event' }).waitFor();
    await eventually(async () => (await page.locator('#detail-payload').innerText()).length > 0, true);
    expect(JSON.parse(await page.locator('#detail-payload').innerText())).to.deep.equal(hostile.data);
    expect(await page.locator('#detail-summary').innerText()).to.include(markup);
    expect(await page.locator('img[src="x"], #injected').count()).to.equal(0);
    expect(await page.title()).not.to.equal('owned');
    expect(browser().problems).to.deep.equal([]);
  });
});

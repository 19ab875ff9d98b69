import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { toDecisionDoc, type ModerationDecisionDoc } from '../../../../tray-service/domain/decision-doc.ts';
import { useTrayStorage } from '../../../support/use-tray-storage.ts';
import { adminApp, eventDoc, storeEvents, type SeedEvent } from '../admin-fixtures.ts';
import {
  attributes,
  eventually,
  expectAccessible,
  openConsole,
  useConsoleBrowser,
  useListening,
} from './console-browser.ts';

const START = Date.UTC(2026, 10, 20, 10, 0, 0);

/** 30 commented events, each with one decision a minute apart: every third a ban request. */
const events: SeedEvent[] = Array.from({ length: 30 }, (_, i) =>
  eventDoc({
    event: 'comment.didCreate',
    receivedAt: new Date(START + i * 60_000),
    data: { comment: { commentId: `cm-${i}`, text: `spam ${i}` } },
  }),
);
const decisions: ModerationDecisionDoc[] = events.map((event, i) =>
  toDecisionDoc(
    event,
    i % 2 === 0 ? 'blocked-words' : 'link-farm',
    {
      action: i % 3 === 0 ? 'ban-request' : 'flag',
      reason: `reason ${i}`,
      subject: { type: 'comment', id: `cm-${i}` },
      userId: `u-${i % 4}`,
    },
    { now: new Date(START + i * 60_000 + 500), delivery: 'off' },
  ),
);
const newestFirst = [...decisions].reverse();
const eventKeys = (docs: readonly ModerationDecisionDoc[]) => docs.map((doc) => doc.eventKey);

describe('events console in a real browser: the Moderation view', function () {
  this.timeout(120_000);
  const browser = useConsoleBrowser();
  const suite = useTrayStorage();
  let close: () => void;
  const base = useListening(() => {
    const admin = adminApp(suite.storage);
    close = admin.close;
    return admin.app;
  });
  let page: Page;
  const shownEventKeys = () => attributes(page.locator('#decisions-rows button[data-key]'), 'data-key');

  before(async () => {
    await storeEvents(suite.storage, events);
    await suite.storage.decisions.saveAll(decisions);
    page = await browser().page();
    await openConsole(page, base(), '#/moderation');
  });
  after(() => close?.());

  it('lists the decisions newest first, 25 at a time, and "Older" loads the rest', async () => {
    await eventually(shownEventKeys, eventKeys(newestFirst.slice(0, 25)));
    await page.click('#decisions-older');
    await eventually(shownEventKeys, eventKeys(newestFirst));
    await page.locator('#decisions-older').waitFor({ state: 'hidden' });
  });

  it('filters the decisions by action and user', async () => {
    await page.selectOption('#d-action', 'ban-request');
    await page.fill('#d-user', 'u-0');
    await page.click('#decisions-filter button[type=submit]');
    const expected = newestFirst.filter((d) => d.action === 'ban-request' && d.userId === 'u-0');
    expect(expected.length).to.be.greaterThan(1);
    await eventually(shownEventKeys, eventKeys(expected));
  });

  it('opens the event a decision is about, with its decision in the detail', async () => {
    const [decision] = newestFirst.filter((d) => d.action === 'ban-request' && d.userId === 'u-0');
    await page.click(`#decisions-rows button[data-key="${decision!.eventKey}"]`);
    await page.locator('#detail-title', { hasText: 'comment.didCreate event' }).waitFor();
    await page.locator('#detail-decisions tr', { hasText: decision!.reason }).waitFor();
    await page.keyboard.press('Escape');
    await page.locator('#detail').waitFor({ state: 'hidden' });
    await page.click('#decisions-filter button[type=reset]');
    await eventually(shownEventKeys, eventKeys(newestFirst.slice(0, 25)));
  });

  it('shows the decisions view without a serious accessibility violation', async () => {
    await expectAccessible(page, 'the Moderation view');
  });

  it('ran without a CSP violation or a script error', () => {
    expect(browser().problems).to.deep.equal([]);
  });
});

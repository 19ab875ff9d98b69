import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { parseBlockedWords } from '../../../../tray-service/domain/blocked-words.ts';
import { toDecisionDoc, type ModerationDecisionDoc } from '../../../../tray-service/domain/decision-doc.ts';
import { useTrayStorage } from '../../../support/use-tray-storage.ts';
import { adminApp, eventDoc, storeEvents, type SeedEvent } from '../admin-fixtures.ts';
import {
  attributes,
  eventually,
  expectAccessible,
  openConsole,
  screenshot,
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
    const admin = adminApp(suite.storage, {
      blockedWords: parseBlockedWords(['spam', '*scam*', '*amper*'], 'exact'),
    });
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

  it('tests a text against the blocklist: each match marked in place, and the action the rule asks for', async () => {
    await page.fill('#rule-text', 'Buy spam now, no scammers');
    await page.click('#rule-tester button[type=submit]');
    const verdict = page.locator('#rule-result .verdict');
    await verdict.waitFor();
    expect(await verdict.getAttribute('data-action')).to.equal('flag');
    expect(await verdict.innerText()).to.equal('Action: flag (rule blocked-words)');
    const matches = page.locator('#rule-result .matches li');
    expect(await attributes(matches, 'data-word')).to.deep.equal(['spam', 'scam']);
    expect(await attributes(matches, 'data-start')).to.deep.equal(['4', '17']);
    expect(await attributes(matches, 'data-end')).to.deep.equal(['8', '21']);
    expect(await page.locator('#rule-result mark').allInnerTexts()).to.deep.equal(['spam', 'scam']);
    expect(await page.locator('#rule-result .marked').innerText()).to.equal('Buy spam now, no scammers');
    await expectAccessible(page, 'the Moderation view');
    await screenshot(page, 'moderation');
  });

  it('lists overlapping matches each, and marks the text they cover once', async () => {
    await page.fill('#rule-text', 'a scamper');
    await page.click('#rule-tester button[type=submit]');
    await page.locator('#rule-result .verdict').waitFor();
    const matches = page.locator('#rule-result .matches li');
    expect(await attributes(matches, 'data-word')).to.deep.equal(['scam', 'amper']);
    expect(await page.locator('#rule-result mark').allInnerTexts()).to.deep.equal(['scamper']);
    expect(await page.locator('#rule-result .marked').innerText()).to.equal('a scamper');
  });

  it('says when the rule would decide nothing', async () => {
    await page.fill('#rule-text', 'all fine');
    await page.click('#rule-tester button[type=submit]');
    await page.locator('#rule-result .verdict[data-action="none"]').waitFor();
    expect(await page.locator('#rule-result').innerText()).to.equal('No match: the rule decides nothing.');
  });

  it('ran without a CSP violation or a script error', () => {
    expect(browser().problems).to.deep.equal([]);
  });
});

import { expect } from 'chai';
import type { Page } from 'playwright-core';
import {
  commentDeleteEvent,
  commentEvent,
  dedupeKeyOf,
  membershipEvent,
  minute,
  postDeleteEvent,
  postEvent,
  type TestEnvelope,
} from '../../worker/event-builder.ts';
import { useWorker } from '../../worker/worker-harness.ts';
import { adminApp } from '../admin-fixtures.ts';
import {
  eventually,
  expectAccessible,
  openConsole,
  useConsoleBrowser,
  useListening,
  holdAnswers,
} from './console-browser.ts';

/** 60 members of c-hike, whose `post` records a deleted post removes: more than the detail lists. */
const members = Array.from({ length: 60 }, (_, i) => `u-m${String(i).padStart(2, '0')}`);

describe('events console in a real browser: which trays a removal changed', function () {
  this.timeout(120_000);
  const browser = useConsoleBrowser();
  const worker = useWorker();
  let close: () => void;
  const base = useListening(() => {
    const admin = adminApp(worker.storage);
    close = admin.close;
    return admin.app;
  });
  let page: Page;
  const comments = [
    commentEvent({ commentId: 'cm-7', author: 'u-cid', createdAt: minute(5) }),
    commentEvent({ commentId: 'cm-8', author: 'u-ben', createdAt: minute(6) }),
  ];
  const deletedComment = commentDeleteEvent({ commentId: 'cm-7', author: 'u-cid' });
  const early = commentDeleteEvent({ commentId: 'cm-9', author: 'u-dee' });
  const join = membershipEvent('join', members, 'c-hike', minute(0));
  const post = postEvent({ postId: 'p-200', author: 'u-zed', createdAt: minute(10) });
  const deletedPost = postDeleteEvent({ postId: 'p-200', author: 'u-zed' });

  before(async () => {
    for (const envelope of [...comments, deletedComment, early, join, post, deletedPost])
      await worker.deliver(envelope);
    page = await browser().page();
    await openConsole(page, base());
  });
  after(() => close?.());

  const open = async (envelope: TestEnvelope) => {
    await page.click(`#events-rows button[data-key="${dedupeKeyOf(envelope)}"]`);
    await page.locator('#detail-title', { hasText: `${envelope.event} event` }).waitFor();
  };
  const shut = async () => {
    await page.click('#detail-close');
    await page.locator('#detail').waitFor({ state: 'hidden' });
  };
  const rows = () => page.locator('#detail-removal-changes tr');

  it("shows a deleted comment's shrunk record: whose, its key, and its actors and count before and after", async () => {
    await open(deletedComment);
    await page.locator('#detail-removal').waitFor({ state: 'visible' });
    expect(await page.locator('#detail-removal-total').innerText()).to.equal(
      'Changed 1 tray record: 1 shrank, 0 named another action, 0 removed (1 action taken out).',
    );
    expect(await rows().allInnerTexts()).to.deep.equal([
      [
        'u-ana',
        'comment_p-100_u-ana',
        'shrank',
        '2 actors (u-ben, u-cid), names cm-8',
        '1 actor (u-ben), names cm-8',
      ].join('\t'),
    ]);
    await expectAccessible(page, 'the event detail of a removal');
    await shut();
  });

  it('says why a removal changed nothing when its action never arrived', async () => {
    await open(early);
    await page.locator('#detail-removal').waitFor({ state: 'visible' });
    expect(await page.locator('#detail-removal-total').innerText()).to.match(
      /^Changed no tray: the action it removes had not arrived/,
    );
    expect(await rows().count()).to.equal(0);
    await shut();
  });

  it("lists a deleted post's first 50 removed records, and More changes pages in the rest", async () => {
    await open(deletedPost);
    await page.locator('#detail-removal').waitFor({ state: 'visible' });
    expect(await page.locator('#detail-removal-total').innerText()).to.equal(
      'Changed 60 tray records: 0 shrank, 0 named another action, 60 removed (1 action taken out).',
    );
    await eventually(() => rows().count(), 50);
    await page.click('#detail-removal-more');
    await eventually(() => rows().count(), 60);
    await page.locator('#detail-removal-more').waitFor({ state: 'hidden' });
    const users = await page.locator('#detail-removal-changes tr td:first-child').allInnerTexts();
    expect(users).to.deep.equal(members);
    expect(await rows().last().innerText()).to.include('removed');
    await shut();
  });

  // An admin who pages, then moves to another event before the page arrives: the page is the
  // first event's, and must not be added to the second's list.
  it("keeps a late page of More changes out of the next event's detail", async () => {
    await open(deletedPost);
    await eventually(() => rows().count(), 50);
    const held = await holdAnswers(page, '**/tray-changes?*');
    try {
      await page.click('#detail-removal-more');
      await held.asked;
      await shut();
      await open(deletedComment);
      await page.locator('#detail-removal').waitFor({ state: 'visible' });
      held.release();
      await eventually(() => page.locator('#detail-removal-more').isEnabled(), true);
      expect(await rows().allInnerTexts()).to.have.lengthOf(1);
      expect(await rows().first().innerText()).to.match(/^u-ana\t/);
    } finally {
      await held.stop();
    }
    await shut();
  });

  it('shows no removal section for an event that removes nothing', async () => {
    await open(comments[0]!);
    expect(await page.locator('#detail-removal').isVisible()).to.equal(false);
    await shut();
  });

  it('showed the detail without a CSP violation, a script error or a failed request', async () => {
    expect(browser().problems).to.deep.equal([]);
  });
});

import type Bull from 'bull';
import { expect } from 'chai';
import type { Locator, Page } from 'playwright-core';
import { createWebhookQueue, type WebhookJobData } from '../../../../shared/queue/webhook-queue.ts';
import { useQueuePrefix } from '../../../support/suite-resources.ts';
import { testStack } from '../../../support/test-stack.ts';
import { useTrayStorage } from '../../../support/use-tray-storage.ts';
import { ADMIN_TOKEN, adminApp, eventDoc, storeEvents, type SeedEvent } from '../admin-fixtures.ts';
import {
  attributes,
  eventually,
  expectAccessible,
  openConsole,
  screenshot,
  useConsoleBrowser,
  useListening,
} from './console-browser.ts';

const MINUTE = 60_000;

/** The data cells of a chart's table as `${a}|${b}` -> value, keyed by two data attributes. */
async function cells(
  table: Locator,
  selector: string,
  a: string,
  b: string,
): Promise<Record<string, number>> {
  const found = table.locator(selector);
  const [as, bs, values] = await Promise.all([
    attributes(found, a),
    attributes(found, b),
    attributes(found, 'data-value'),
  ]);
  return Object.fromEntries(as.map((x, i) => [`${x}|${bs[i]}`, Number(values[i])]));
}

describe('events console in a real browser: the Traffic view', function () {
  this.timeout(120_000);
  const browser = useConsoleBrowser();
  const suite = useTrayStorage();
  const prefix = useQueuePrefix();
  let queue: Bull.Queue<WebhookJobData>;
  let close: () => void;
  const base = useListening(() => {
    queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    const admin = adminApp(suite.storage, { queues: [queue] });
    close = admin.close;
    return admin.app;
  });
  let page: Page;

  // Minutes of the last 24 hours, whatever the time the test runs.
  const m0 = Math.floor(Date.now() / MINUTE) * MINUTE - 30 * MINUTE;
  const at = (minute: number, second: number) => new Date(m0 + minute * MINUTE + second * 1000);
  const seeds: SeedEvent[] = [
    ...[1, 2, 3].map((s) => eventDoc({ event: 'post.didCreate', receivedAt: at(0, s) })),
    ...[4, 5].map((s) => eventDoc({ event: 'comment.didCreate', receivedAt: at(0, s) })),
    ...[1, 2, 3, 4].map((s) => eventDoc({ event: 'post.didCreate', receivedAt: at(2, s) })),
    eventDoc({ event: 'reaction.didAdd', receivedAt: at(7, 30) }),
    // Outside the 24 hours: counted in no chart.
    eventDoc({ event: 'post.didCreate', receivedAt: new Date(m0 - 25 * 60 * MINUTE) }),
  ];
  /** Lags (ms from acknowledgement to tray) of the events applied, by seed index. */
  const lags = new Map([
    [0, 40],
    [1, 90],
    [2, 400],
    [5, 70],
  ]);

  before(async () => {
    await storeEvents(suite.storage, seeds);
    for (const [index, lag] of lags) {
      const event = seeds[index]!;
      await suite.storage.events.markApplied(event, new Date(event.receivedAt.getTime() + lag));
    }
    // Four jobs waiting, and two that failed.
    for (let i = 0; i < 6; i += 1) {
      const job = eventDoc();
      await queue.add(
        {
          dedupeKey: job.key,
          webhook: 'main',
          receivedAt: job.receivedAt.toISOString(),
          event: job.event,
          data: job.data,
        },
        { jobId: job.key },
      );
    }
    for (let i = 0; i < 2; i += 1) {
      const job = await queue.getNextJob();
      await job?.moveToFailed({ message: 'seeded failure' }, true);
    }
    page = await browser().page();
    await openConsole(page, base(), '#/traffic');
  });
  after(async () => {
    close?.();
    await queue?.close();
  });

  it('plots the events per minute by name, and its data table holds the seeded counts', async () => {
    const table = page.locator('#chart-events table[data-chart="events-per-minute"]');
    await table.waitFor({ state: 'attached' });
    const expected: Record<string, number> = {
      [`post.didCreate|${m0}`]: 3,
      [`comment.didCreate|${m0}`]: 2,
      [`reaction.didAdd|${m0}`]: 0,
      [`post.didCreate|${m0 + 2 * MINUTE}`]: 4,
      [`comment.didCreate|${m0 + 2 * MINUTE}`]: 0,
      [`reaction.didAdd|${m0 + 2 * MINUTE}`]: 0,
      [`post.didCreate|${m0 + 7 * MINUTE}`]: 0,
      [`comment.didCreate|${m0 + 7 * MINUTE}`]: 0,
      [`reaction.didAdd|${m0 + 7 * MINUTE}`]: 1,
    };
    expect(await cells(table, 'td[data-minute]', 'data-event', 'data-minute')).to.deep.equal(expected);
    const totals = table.locator('tfoot td');
    const names = await attributes(totals, 'data-event');
    const sums = (await attributes(totals, 'data-total')).map(Number);
    expect(Object.fromEntries(names.map((name, i) => [name, sums[i]]))).to.deep.equal({
      'post.didCreate': 7,
      'comment.didCreate': 2,
      'reaction.didAdd': 1,
    });
    // The chart itself: a canvas, and a legend naming each series.
    expect(await page.locator('#chart-events canvas').count()).to.be.greaterThan(0);
    const legend = await page.locator('#chart-events .u-legend').innerText();
    for (const name of ['post.didCreate', 'comment.didCreate', 'reaction.didAdd'])
      expect(legend).to.include(name);
  });

  it('shows the queues’ waiting and failed jobs as the queue holds them', async () => {
    const table = page.locator('#chart-queue table[data-chart="queue"]');
    await table.waitFor({ state: 'attached' });
    const counts = await cells(table, 'td[data-field]', 'data-queue', 'data-field');
    expect(counts).to.include({ 'webhook-events|waiting': 4, 'webhook-events|failed': 2 });
    expect(await page.locator('#chart-queue canvas').count()).to.be.greaterThan(0);
  });

  /** The x range a chart drew, as its element records it (epoch ms). */
  const drawnRange = async (figure: string) => {
    const plot = page.locator(`${figure} .chart`);
    const [min, max] = await Promise.all([plot.getAttribute('data-x-min'), plot.getAttribute('data-x-max')]);
    return { min: Number(min), max: Number(max), span: Number(max) - Number(min) };
  };

  it('draws the queue chart of its first samples over a few minutes ending now, not over years', async () => {
    await page.locator('#chart-queue canvas').first().waitFor({ state: 'attached' });
    const { max, span } = await drawnRange('#chart-queue');
    expect(span).to.be.within(60_000, 15 * MINUTE);
    expect(Math.abs(max - Date.now())).to.be.below(2 * MINUTE);
  });

  it('zooms the per-minute charts to the last hour, where a minute’s burst is a block of that minute, and back', async () => {
    await page.locator('#chart-events canvas').first().waitFor({ state: 'attached' });
    const day = await drawnRange('#chart-events');
    expect(day.span).to.equal(24 * 60 * MINUTE);
    await page.click('.range-switch button[data-range="hour"]');
    expect(await page.getAttribute('.range-switch button[data-range="hour"]', 'aria-pressed')).to.equal(
      'true',
    );
    await eventually(async () => (await drawnRange('#chart-events')).span, 60 * MINUTE);
    const hour = await drawnRange('#chart-events');
    expect(Math.abs(hour.max - Date.now())).to.be.below(2 * MINUTE);
    expect(hour.min).to.be.below(m0);
    expect((await drawnRange('#chart-lag')).span).to.equal(60 * MINUTE);
    await screenshot(page, 'traffic-hour');
    await page.click('.range-switch button[data-range="day"]');
    await eventually(async () => (await drawnRange('#chart-events')).span, 24 * 60 * MINUTE);
  });

  it('plots the lag from acknowledgement to tray as the API computes it, the largest exact', async () => {
    const table = page.locator('#chart-lag table[data-chart="lag"]');
    await table.waitFor({ state: 'attached' });
    const shown = await cells(table, 'td[data-field]', 'data-field', 'data-minute');
    const response = await fetch(`${base()}/admin/stats/lag`, {
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const stats = (await response.json()) as {
      minutes: number[];
      p50: (number | null)[];
      p99: (number | null)[];
      max: (number | null)[];
    };
    const fromApi: Record<string, number> = {};
    stats.minutes.forEach((minute, i) => {
      if (stats.p50[i] === null) return;
      for (const field of ['p50', 'p99', 'max'] as const) fromApi[`${field}|${minute}`] = stats[field][i]!;
    });
    expect(shown).to.deep.equal(fromApi);
    expect(shown[`max|${m0}`]).to.equal(400);
    expect(shown[`max|${m0 + 2 * MINUTE}`]).to.equal(70);
    expect(shown[`p50|${m0}`]).to.be.at.most(shown[`p99|${m0}`]!);
  });

  it('redraws with the new counts on Refresh', async () => {
    await storeEvents(suite.storage, [eventDoc({ event: 'post.didCreate', receivedAt: at(0, 9) })]);
    await page.click('#traffic-refresh');
    const cell = page.locator(`#chart-events td[data-event="post.didCreate"][data-minute="${m0}"]`);
    await eventually(() => cell.getAttribute('data-value'), '4');
    await expectAccessible(page, 'the Traffic view');
    await screenshot(page, 'traffic');
  });

  it('counts the jobs of a paused queue in its depth (bull moves them from waiting to paused)', async () => {
    await queue.pause();
    try {
      await page.click('#traffic-refresh');
      const table = page.locator('#chart-queue table[data-chart="queue"]');
      const shown = async () => ({
        counts: await cells(table, 'td[data-field]', 'data-queue', 'data-field'),
        depth: await table.getAttribute('data-depth'),
      });
      await eventually(shown, {
        counts: {
          'webhook-events|waiting': 0,
          'webhook-events|paused': 4,
          'webhook-events|active': 0,
          'webhook-events|delayed': 0,
          'webhook-events|failed': 2,
          'webhook-events|completed': 0,
        },
        depth: '4',
      });
    } finally {
      await queue.resume();
    }
  });

  it('draws the names beyond the most frequent as one series of the other events, counting each', async () => {
    // Three seeded names and 30 invented ones (one event each): 33 names, 30 drawn on their own.
    const invented = Array.from({ length: 30 }, (_, i) =>
      eventDoc({ event: `made.up${String(i).padStart(2, '0')}`, receivedAt: at(9, i) }),
    );
    await storeEvents(suite.storage, invented);
    await page.click('#traffic-refresh');
    const others = page.locator('#chart-events tfoot td[data-event="3 other events"]');
    await eventually(() => others.getAttribute('data-total'), '3');
    const table = page.locator('#chart-events table[data-chart="events-per-minute"]');
    const names = await attributes(table.locator('tfoot td'), 'data-event');
    expect(names).to.have.lengthOf(31);
    // post.didCreate (8) and comment.didCreate (2) lead; of the 31 names with one event each, the
    // first 28 by name are drawn, and made.up28, made.up29 and reaction.didAdd are the others.
    expect(names).to.include.members(['post.didCreate', 'comment.didCreate', 'made.up27']);
    expect(names).to.not.include.members(['reaction.didAdd']);
    const sums = (await attributes(table.locator('tfoot td'), 'data-total')).map(Number);
    expect(sums.reduce((sum, n) => sum + n, 0)).to.equal(8 + 2 + 1 + 30);
    expect(await page.locator('#chart-events .u-legend').innerText()).to.include('3 other events');
  });

  it('drew the charts without a CSP violation or a script error', () => {
    expect(browser().problems).to.deep.equal([]);
  });
});

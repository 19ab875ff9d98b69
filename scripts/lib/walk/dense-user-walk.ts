import { trayCaller, type TrayCaller } from './tray-caller.ts';
import { expectThat, sleep, step, waitFor } from './walk-step.ts';
import { quantile } from '../quantile.ts';

interface PagedRecord {
  v_tarid_uid: string;
  verb: string;
  targetId: string;
  lastUpdate: number;
}

type View = 'inbox' | 'archived' | 'snoozed' | 'all';

/** The tray's per-user rate-limit window as `npm start` runs it (RATE_LIMIT_WINDOW_MS's default). */
const RATE_WINDOW_MS = 5_000;

const latencies = (ms: number[]) => {
  const sorted = [...ms].sort((a, b) => a - b);
  return `p50 ${quantile(sorted, 0.5).toFixed(1)} ms, p99 ${quantile(sorted, 0.99).toFixed(1)} ms`;
};

/**
 * Every record of a view, walking `nextPage` as docs/tray-api.md#paging-v3-startafternextpage tells
 * a client to.
 */
async function walkPages(api: TrayCaller, view: View) {
  const records: PagedRecord[] = [];
  const ms: number[] = [];
  let totalPages = 0;
  for (let startAfter: number | undefined; startAfter !== 0;) {
    const query = startAfter === undefined ? '' : `&startAfter=${startAfter}`;
    const answer = await api.call('GET', `/notifications/v3/history?view=${view}${query}`);
    expectThat(answer.status === 200, `GET history?view=${view}${query} answered ${answer.status}`);
    ms.push(answer.ms);
    if (startAfter === undefined) totalPages = answer.body.totalPages as number;
    records.push(...(answer.body.data as PagedRecord[]));
    startAfter = answer.body.nextPage as number;
  }
  const ids = records.map((r) => r.v_tarid_uid);
  expectThat(new Set(ids).size === ids.length, `${view}: ${ids.length - new Set(ids).size} records twice`);
  const disorder = records.findIndex((r, i) => i > 0 && r.lastUpdate > (records[i - 1]?.lastUpdate ?? 0));
  expectThat(disorder < 0, `${view}: record ${disorder} is newer than the one before it`);
  return { records, ms, totalPages };
}

/**
 * The API as a user whose records are dense in time meets it: `expected` mention records within a
 * minute, several sharing one millisecond. Pages walk every record once, in order, across ties;
 * both counts stay exact through reads, archive all read, a 5 s snooze of 100 records and its
 * wake-up, and seen all.
 */
export async function walkDenseUser(tray: string, jwtSecret: string, userId: string, expected: number) {
  const api = await trayCaller(tray, jwtSecret, userId);
  const counts = async () => {
    const answer = await api.call('GET', '/notifications/v3');
    expectThat(answer.status === 200, `GET /notifications/v3 answered ${answer.status}`);
    return answer.body.data as { totalUnreadCount: number; totalUnseenCount: number };
  };
  const expectCounts = async (unread: number, unseen: number) => {
    const now = await counts();
    expectThat(
      now.totalUnreadCount === unread && now.totalUnseenCount === unseen,
      `counts ${JSON.stringify(now)}, expected unread ${unread}, unseen ${unseen}`,
    );
  };
  const countMs: number[] = [];
  const timedCounts = async () => {
    const started = performance.now();
    const now = await counts();
    countMs.push(performance.now() - started);
    return now;
  };

  let inbox: PagedRecord[] = [];
  await step(`dense user: all ${expected} records arrive, counted exactly`, async () => {
    await waitFor(
      'every dense record',
      async () => ((await counts()).totalUnreadCount === expected ? true : undefined),
      60_000,
      250,
    );
    for (let i = 0; i < 50; i++) await timedCounts();
    await expectCounts(expected, expected);
    return `unread ${expected}, unseen ${expected}; GET /notifications/v3 ${latencies(countMs)} (50 calls)`;
  });

  await step('dense user: walking nextPage returns every record once, in order, across ties', async () => {
    const walk = await walkPages(api, 'inbox');
    inbox = walk.records;
    expectThat(inbox.length === expected, `${inbox.length} records paged, expected ${expected}`);
    const instants = new Set(inbox.map((r) => r.lastUpdate)).size;
    const span = (inbox[0]?.lastUpdate ?? 0) - (inbox.at(-1)?.lastUpdate ?? 0);
    return `${walk.ms.length} pages (totalPages ${walk.totalPages}) within ${(span / 1000).toFixed(1)} s of lastUpdate on ${instants} distinct milliseconds; a page ${latencies(walk.ms)}`;
  });

  const read = inbox.slice(0, 40);
  await step('dense user: read 40, archive all read', async () => {
    for (const r of read) {
      const answer = await api.call('POST', '/notifications/v2/read', { verb: r.verb, targetId: r.targetId });
      expectThat(answer.status === 200, `POST v2/read answered ${answer.status}`);
    }
    await expectCounts(expected - 40, expected - 40);
    const answer = await api.call('POST', '/notifications/v3/records/archive', { all: true, readOnly: true });
    const updated = (answer.body.data as { updated: number } | undefined)?.updated;
    expectThat(updated === 40, `archive all read answered ${answer.status}, updated ${updated}`);
    await expectCounts(expected - 40, expected - 40);
    const archived = await walkPages(api, 'archived');
    expectThat(archived.records.length === 40, `the archived view holds ${archived.records.length}`);
    return `archive updated 40 in ${answer.ms.toFixed(1)} ms; counts exact; archived view 40 records`;
  });

  await step(
    'dense user: snooze 100 for 5 s; counts drop by 100, then come back at the wake-up',
    async () => {
      const ids = inbox.slice(40, 140).map((r) => r.v_tarid_uid);
      // The snoozed view must be read before the wake-up, about 15 calls; a 429 waited out among them
      // (the steps above spend most of the per-user budget of 100 calls per 5 s) would let the
      // first records wake before it is read. A rest of one whole window starts the step with the
      // full budget.
      await sleep(RATE_WINDOW_MS);
      const until = Date.now() + 5_000;
      const answer = await api.call('POST', '/notifications/v3/records/snooze', { ids, until });
      const updated = (answer.body.data as { updated: number } | undefined)?.updated;
      expectThat(updated === 100, `snooze answered ${answer.status}, updated ${updated}`);
      await expectCounts(expected - 140, expected - 140);
      const snoozed = await walkPages(api, 'snoozed');
      expectThat(Date.now() < until, `the snoozed view was read ${Date.now() - until} ms after the wake-up`);
      expectThat(snoozed.records.length === 100, `the snoozed view holds ${snoozed.records.length}`);
      await sleep(Math.max(0, until - Date.now()));
      await waitFor(
        'the woken records counted',
        async () => ((await counts()).totalUnreadCount === expected - 40 ? true : undefined),
        5_000,
        50,
      );
      const back = Date.now() - until;
      await expectCounts(expected - 40, expected - 40);
      const all = await walkPages(api, 'all');
      expectThat(all.records.length === expected, `the all view holds ${all.records.length}`);
      return `snooze updated 100 in ${answer.ms.toFixed(1)} ms; all 100 counted again ${back} ms after their until (polled every 50 ms); all view ${expected}`;
    },
  );

  await step('dense user: seen all', async () => {
    const answer = await api.call('POST', '/notifications/v3/records/seen', { all: true });
    const updated = (answer.body.data as { updated: number } | undefined)?.updated;
    expectThat(updated === expected - 40, `seen all answered ${answer.status}, updated ${updated}`);
    await expectCounts(expected - 40, 0);
    return `updated ${updated} in ${answer.ms.toFixed(1)} ms; unseen 0, unread ${expected - 40}`;
  });
  if (api.rateLimited() > 0) process.stdout.write(`  (${api.rateLimited()} calls waited out a 429)\n`);
}

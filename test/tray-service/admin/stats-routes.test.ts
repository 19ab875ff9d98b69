import type Bull from 'bull';
import { expect } from 'chai';
import type { Express } from 'express';
import request from 'supertest';
import { createWebhookQueue, type WebhookJobData } from '../../../shared/queue/webhook-queue.ts';
import { LAG_BOUNDS_MS, lagBucket } from '../../../tray-service/domain/lag-histogram.ts';
import { useQueuePrefix } from '../../support/suite-resources.ts';
import { testStack } from '../../support/test-stack.ts';
import { useTrayStorage } from '../../support/use-tray-storage.ts';
import { ADMIN_TOKEN, adminApp } from './admin-fixtures.ts';

const MINUTE = 60_000;
/** The console's clock: a whole minute, so the default range is exactly 24 hours of minutes. */
const NOW = Math.floor(Date.now() / MINUTE) * MINUTE;
const minute = (ago: number) => NOW - ago * MINUTE;
const iso = (at: number) => new Date(at).toISOString();
const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

/** What is seeded: [minutes ago, event name, lags of its events (ms)]. */
const SEEDED: [number, string, number[]][] = [
  [30, 'post.didCreate', [40, 45, 60, 900]],
  [30, 'comment.didCreate', [10, 12]],
  [29, 'post.didCreate', [2_500]],
  [5, 'reaction.didAdd', [7, 8, 9, 30, 31, 32, 33, 250, 260, 20_000]],
];

describe('GET /admin/stats/* (the events console’s traffic charts)', function () {
  this.timeout(30_000);
  const suite = useTrayStorage();
  const prefix = useQueuePrefix();
  let app: Express;
  let close: () => void;
  let queue: Bull.Queue<WebhookJobData>;

  before(async () => {
    let n = 0;
    for (const [ago, event, lags] of SEEDED) {
      for (const lag of lags) {
        const receivedAt = new Date(minute(ago) + (n % 50) * 1_000);
        const stored = await suite.storage.events.store(
          { key: `stats-${n++}`, event, data: {}, webhook: 'main', receivedAt },
          { status: 'applied' },
          { retentionDays: 30, now: receivedAt },
        );
        await suite.storage.events.markApplied(stored, new Date(receivedAt.getTime() + lag));
      }
    }
    // A redelivery stores nothing and counts nothing.
    await suite.storage.events.store(
      {
        key: 'stats-0',
        event: 'post.didCreate',
        data: {},
        webhook: 'main',
        receivedAt: new Date(minute(30)),
      },
      { status: 'applied' },
      { retentionDays: 30, now: new Date() },
    );
    queue = createWebhookQueue({ redis: testStack().redisUrl, prefix });
    for (const id of ['a', 'b']) {
      await queue.add(
        { dedupeKey: id, webhook: 'main', receivedAt: iso(NOW), event: 'x', data: {} },
        { jobId: id },
      );
    }
    ({ app, close } = adminApp(suite.storage, { queues: [queue], clock: () => NOW }));
  });
  after(async () => {
    close();
    await queue.close();
  });

  const get = (path: string) => request(app).get(path).set(admin);

  describe('GET /admin/stats/events-per-minute', () => {
    it('counts each minute’s events by name, equal to the events seeded', async () => {
      const res = await get(
        `/admin/stats/events-per-minute?since=${iso(minute(31))}&until=${iso(minute(4))}`,
      ).expect(200);
      expect(res.body.from).to.equal(iso(minute(31)));
      expect(res.body.to).to.equal(iso(minute(4)));
      expect(res.body.minutes).to.have.lengthOf(27);
      expect(res.body.minutes[0]).to.equal(minute(31));
      const at = (ago: number) => res.body.minutes.indexOf(minute(ago));
      const series = Object.fromEntries(
        (res.body.series as { event: string; counts: number[] }[]).map((s) => [s.event, s.counts]),
      );
      expect(Object.keys(series)).to.deep.equal(['comment.didCreate', 'post.didCreate', 'reaction.didAdd']);
      for (const [ago, event, lags] of SEEDED) {
        expect(series[event]![at(ago)], `${event} ${ago} minutes ago`).to.equal(lags.length);
      }
      const all = Object.values(series)
        .flat()
        .reduce((sum, n) => sum + n, 0);
      expect(all).to.equal(SEEDED.reduce((sum, [, , lags]) => sum + lags.length, 0));
    });
    it('covers the last 24 hours by default', async () => {
      const res = await get('/admin/stats/events-per-minute').expect(200);
      expect(res.body.minutes).to.have.lengthOf(1_440);
      expect(res.body.to).to.equal(iso(NOW));
      expect(res.body.from).to.equal(iso(NOW - 1_440 * MINUTE));
    });
    it('covers 1,440 minutes by default when now is part-way through a minute, now’s minute last', async () => {
      const { app: later, close: closeLater } = adminApp(suite.storage, {
        queues: [queue],
        clock: () => NOW + 30_000,
      });
      try {
        const res = await request(later).get('/admin/stats/events-per-minute').set(admin).expect(200);
        expect(res.body.minutes).to.have.lengthOf(1_440);
        expect(res.body.to).to.equal(iso(NOW + MINUTE));
        expect(res.body.from).to.equal(iso(NOW + MINUTE - 1_440 * MINUTE));
      } finally {
        closeLater();
      }
    });
    it('covers 1,440 minutes, until’s last, for 24 hours given part-way through a minute', async () => {
      // Widened to whole minutes, such a range spanned 1,441: more than the limit it had passed.
      const since = iso(NOW - 1_440 * MINUTE + 30_000);
      const until = iso(NOW + 30_000);
      for (const path of ['events-per-minute', 'lag']) {
        const res = await get(`/admin/stats/${path}?since=${since}&until=${until}`).expect(200);
        expect(res.body.minutes, path).to.have.lengthOf(1_440);
        expect([res.body.from, res.body.to], path).to.deep.equal([
          iso(NOW + MINUTE - 1_440 * MINUTE),
          iso(NOW + MINUTE),
        ]);
      }
    });
    it('refuses a range over 24 hours, a reversed one, and unknown parameters with 400 naming the field', async () => {
      const cases: [string, string][] = [
        [`?since=${iso(NOW - 25 * 60 * MINUTE)}&until=${iso(NOW)}`, 'until: at most 24 hours after since'],
        [`?since=${iso(NOW)}&until=${iso(NOW - MINUTE)}`, 'until: must be later than since'],
        ['?since=yesterday', 'since: expected an ISO 8601 time'],
        ['?event=post.didCreate', 'event: unknown query parameter'],
        // until defaults to now: a since the caller sent is what is wrong, so it is the one named.
        [`?since=${iso(NOW + MINUTE)}`, 'since: must be earlier than now (the default until)'],
        [`?since=${iso(NOW)}`, 'since: must be earlier than now (the default until)'],
        [`?since=${iso(NOW - 25 * 60 * MINUTE)}`, 'since: at most 24 hours before now (the default until)'],
        // Minutes before 1970 would be negative epoch ms, and a year past 9999 no RFC 3339 time.
        [
          '?since=1969-12-31T12:00:00Z&until=1970-01-01T01:00:00Z',
          'since: expected a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z',
        ],
        [
          '?until=9999-12-31T23:59:59-23:59',
          'until: expected a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z',
        ],
        ['?until=1970-01-01T00:00:00Z', 'until: must be later than 1970-01-01T00:00:00Z'],
        // The chart's end is widened to the next whole minute, which must still be in 9999.
        [
          '?since=9999-12-31T23:00:00Z&until=9999-12-31T23:59:30Z',
          'until: at most 9999-12-31T23:59:00Z (a chart ends on a whole minute)',
        ],
      ];
      for (const [query, message] of cases) {
        const res = await get(`/admin/stats/events-per-minute${query}`);
        expect([res.status, res.body.message], query).to.deep.equal([400, message]);
      }
    });

    it('starts a range given only an until in its first day at 1970-01-01, and ends the last in 9999', async () => {
      const first = await get('/admin/stats/events-per-minute?until=1970-01-01T01:00:00Z').expect(200);
      expect(first.body.from).to.equal('1970-01-01T00:00:00.000Z');
      expect(first.body.minutes).to.have.lengthOf(60);
      expect(first.body.minutes[0]).to.equal(0);
      const last = await get('/admin/stats/lag?until=9999-12-31T23:59:00Z').expect(200);
      expect(last.body.to).to.equal('9999-12-31T23:59:00.000Z');
      expect(last.body.minutes).to.have.lengthOf(1_440);
    });
  });

  describe('GET /admin/stats/lag', () => {
    it('gives each minute’s count, exact max and p50/p99 within the bucket of the true value', async () => {
      const res = await get(`/admin/stats/lag?since=${iso(minute(31))}&until=${iso(minute(4))}`).expect(200);
      const at = (ago: number) => (res.body.minutes as number[]).indexOf(minute(ago));
      const lags30 = [40, 45, 60, 900, 10, 12];
      expect(res.body.count[at(30)]).to.equal(6);
      expect(res.body.max[at(30)]).to.equal(900);
      expect(res.body.count[at(5)]).to.equal(10);
      expect(res.body.max[at(5)]).to.equal(20_000);
      expect(res.body.p50[at(20)]).to.equal(null);
      const within = (estimate: number, truth: number) => {
        const bucket = lagBucket(truth);
        expect(estimate).to.be.within(bucket === 0 ? 0 : LAG_BOUNDS_MS[bucket - 1]!, LAG_BOUNDS_MS[bucket]!);
      };
      within(res.body.p50[at(30)], [...lags30].sort((a, b) => a - b)[2]!);
      within(res.body.p99[at(30)], 900);
      expect(res.body.overall).to.include({ count: 17, max: 20_000 });
    });
  });

  describe('GET /admin/stats/queue', () => {
    it('reports each queue’s job counts', async () => {
      const res = await get('/admin/stats/queue').expect(200);
      expect(res.body).to.deep.equal({
        queues: [{ name: queue.name, waiting: 2, active: 0, delayed: 0, paused: 0, failed: 0, completed: 0 }],
      });
    });
    it('reports the jobs a paused queue holds (bull keeps them as paused, not waiting)', async () => {
      const paused = createWebhookQueue({ redis: testStack().redisUrl, prefix: useQueuePrefix() });
      const pausedApp = adminApp(suite.storage, { queues: [paused], clock: () => NOW });
      try {
        const job = (id: string) => ({
          dedupeKey: id,
          webhook: 'main',
          receivedAt: iso(NOW),
          event: 'x',
          data: {},
        });
        await paused.add(job('p1'), { jobId: 'p1' });
        await paused.pause();
        // One that came after the pause as well.
        await paused.add(job('p2'), { jobId: 'p2' });
        const res = await request(pausedApp.app).get('/admin/stats/queue').set(admin).expect(200);
        expect(res.body).to.deep.equal({
          queues: [
            { name: paused.name, waiting: 0, active: 0, delayed: 0, paused: 2, failed: 0, completed: 0 },
          ],
        });
      } finally {
        pausedApp.close();
        await paused.close();
      }
    });
  });
});

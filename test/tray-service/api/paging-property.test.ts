import { expect } from 'chai';
import fc from 'fast-check';
import request from 'supertest';
import { encodeRecordKey } from '../../../tray-service/domain/record-key.ts';
import type { TrayVerb } from '../../../tray-service/domain/tray-record.ts';
import { seedRecords, type SeedRecord } from '../../support/seed-tray.ts';
import { uniqueName } from '../../support/suite-resources.ts';
import { bearer, useTrayApi } from './support/api-harness.ts';

const T0 = Date.UTC(2026, 0, 1);

interface Seeded {
  key: string;
  verb: TrayVerb;
  lastUpdate: number;
}

/** Writes the seeds through the port; each with its record key. */
async function seed(storage: Parameters<typeof seedRecords>[0], specs: SeedRecord[]): Promise<Seeded[]> {
  await seedRecords(storage, specs);
  return specs.map((spec) => ({
    key: encodeRecordKey({ verb: spec.verb ?? 'comment', targetId: spec.targetId!, userId: spec.userId }),
    verb: spec.verb ?? 'comment',
    lastUpdate: spec.lastUpdate!,
  }));
}

/** The documented order: newest first, then the key descending among equal timestamps. */
const byOrder = (a: Seeded, b: Seeded) =>
  b.lastUpdate - a.lastUpdate || (a.key < b.key ? 1 : a.key > b.key ? -1 : 0);

describe('history paging (property)', () => {
  const api = useTrayApi();

  it('walks every record exactly once, in order, through v3 and v2, with many equal timestamps, across hours and days', async function () {
    this.timeout(120_000);
    // Few distinct timestamps for up to 40 records: large groups of equal lastUpdate, a second,
    // 40 minutes or 7 hours apart.
    const recordSets = fc.array(
      fc.record({
        offset: fc.integer({ min: 0, max: 6 }),
        verb: fc.constantFrom('post', 'comment', 'mention' as const),
      }),
      // size 'max': without it fast-check draws at most about ten, whatever maxLength says.
      { maxLength: 40, size: 'max' },
    );
    const spacings = fc.constantFrom(1_000, 40 * 60_000, 7 * 3_600_000);
    await fc.assert(
      fc.asyncProperty(
        recordSets,
        fc.integer({ min: 1, max: 7 }),
        spacings,
        async (specs, pageSize, spacing) => {
          const user = uniqueName('walker');
          const records = await seed(
            api.storage,
            specs.map((spec, i) => ({
              userId: user,
              verb: spec.verb,
              targetId: `t${i}`,
              lastUpdate: T0 - spec.offset * spacing,
            })),
          );
          const app = api.app({
            settings: { pageSize, networkId: 'n', blockApi: true, retentionDays: 90 },
            now: () => T0,
          });
          const auth = await bearer(user);

          const v3: string[] = [];
          let startAfter: number | undefined;
          for (let call = 0; ; call++) {
            expect(call).to.be.below(records.length + 2, 'the walk must end');
            const res = await request(app)
              .get(`/notifications/v3/history${startAfter === undefined ? '' : `?startAfter=${startAfter}`}`)
              .set('Authorization', auth)
              .expect(200);
            expect(res.body.totalPages).to.equal(Math.ceil(records.length / pageSize));
            v3.push(...res.body.data.map((r: { v_tarid_uid: string }) => r.v_tarid_uid));
            if (res.body.nextPage === 0) break;
            startAfter = res.body.nextPage;
          }
          expect(v3).to.deep.equal([...records].sort(byOrder).map((r) => r.key));

          const withoutMentions = records.filter((r) => r.verb !== 'mention').sort(byOrder);
          const v2: string[] = [];
          const first = await request(app)
            .get('/notifications/v2/history')
            .set('Authorization', auth)
            .expect(200);
          const totalPages: number = first.body.totalPages;
          expect(totalPages).to.equal(Math.ceil(withoutMentions.length / pageSize));
          for (let page = 1; page <= totalPages + 1; page++) {
            const res = await request(app)
              .get(`/notifications/v2/history?page=${page}`)
              .set('Authorization', auth)
              .expect(200);
            v2.push(...res.body.data.map((r: { v_tarid_uid: string }) => r.v_tarid_uid));
          }
          expect(v2).to.deep.equal(withoutMentions.map((r) => r.key));
          await api.storage.records.deleteAll(user);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('neither repeats nor skips unchanged records while new activity arrives between pages', async () => {
    const user = 'busy-walker';
    const records = await seed(
      api.storage,
      Array.from({ length: 30 }, (_, i) => ({
        userId: user,
        targetId: `t${i}`,
        lastUpdate: T0 + Math.floor(i / 4) * 1000,
      })),
    );
    const targetOf = new Map(records.map((record, i) => [record.key, `t${i}`]));
    const app = api.app({ now: () => T0 });
    const auth = await bearer(user);
    const seen: string[] = [];
    const moved = new Set<string>();
    let startAfter: number | undefined;
    let tick = 100;
    for (;;) {
      const res = await request(app)
        .get(`/notifications/v3/history${startAfter === undefined ? '' : `?startAfter=${startAfter}`}`)
        .set('Authorization', auth)
        .expect(200);
      seen.push(...res.body.data.map((r: { v_tarid_uid: string }) => r.v_tarid_uid));
      if (res.body.nextPage === 0) break;
      startAfter = res.body.nextPage;
      // New activity between pages: one record already seen and one not yet seen move to the top,
      // and a brand-new record arrives.
      const notYetSeen = records.find((r) => !seen.includes(r.key) && !moved.has(r.key));
      for (const key of [seen[0], notYetSeen?.key]) {
        if (key === undefined) continue;
        moved.add(key);
        // A new action on the record's target (another action id): the record moves to the top.
        const targetId = targetOf.get(key)!;
        const lastUpdate = T0 + tick++ * 1000;
        await seedRecords(api.storage, [
          { userId: user, targetId, lastUpdate, lastActionId: `moved-${lastUpdate}` },
        ]);
      }
      await seedRecords(api.storage, [
        { userId: user, targetId: `new${tick}`, lastUpdate: T0 + tick++ * 1000 },
      ]);
    }
    const unchanged = records
      .filter((r) => !moved.has(r.key))
      .sort(byOrder)
      .map((r) => r.key);
    expect(seen.filter((id) => !moved.has(id))).to.deep.equal(unchanged);
    expect(new Set(seen).size).to.equal(seen.length);
  });
});

import { expect } from 'chai';
import fc from 'fast-check';
import request from 'supertest';
import { DAY_MS } from '../../../shared/time/durations.ts';
import { historyBucket } from '../../../shared/tray/storage-keys.ts';
import { TRAY_RECORDS, type TrayRecordDoc } from '../../../shared/tray/tray-record.ts';
import { uniqueName } from '../../support/suite-resources.ts';
import { bearer, useTrayApi } from './support/api-harness.ts';
import { aTrayRecord, insertRecords } from '../../support/tray-record-builder.ts';

const T0 = Date.UTC(2026, 0, 1);

/** The documented order: newest first, then _id descending among equal timestamps. */
const byOrder = (a: TrayRecordDoc, b: TrayRecordDoc) =>
  b.lastUpdate - a.lastUpdate || (a._id < b._id ? 1 : a._id > b._id ? -1 : 0);

describe('history paging (property)', () => {
  const api = useTrayApi();

  it('walks every record exactly once, in order, through v3 and v2, with many equal timestamps, across hours and days', async () => {
    // Few distinct timestamps for up to 40 records: large groups of equal lastUpdate, a second,
    // 40 minutes or 7 hours apart (one history bucket or many), some in the one-day buckets
    // records had before buckets were an hour wide.
    const recordSets = fc.array(
      fc.record({
        offset: fc.integer({ min: 0, max: 6 }),
        verb: fc.constantFrom('post', 'comment', 'mention' as const),
        dayBucket: fc.boolean(),
      }),
      { maxLength: 40 },
    );
    const spacings = fc.constantFrom(1_000, 40 * 60_000, 7 * 3_600_000);
    await fc.assert(
      fc.asyncProperty(
        recordSets,
        fc.integer({ min: 1, max: 7 }),
        spacings,
        async (specs, pageSize, spacing) => {
          const user = uniqueName('walker');
          const records = specs.map((spec, i) => {
            const lastUpdate = T0 - spec.offset * spacing;
            return aTrayRecord({
              userId: user,
              verb: spec.verb,
              targetId: `t${i}`,
              lastUpdate,
              ...(spec.dayBucket ? { bucket: historyBucket(user, Math.floor(lastUpdate / DAY_MS)) } : {}),
            });
          });
          await insertRecords(api.db, records);
          const app = api.app({ settings: { pageSize, networkId: 'n', blockApi: true }, now: () => T0 });
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
          expect(v3).to.deep.equal([...records].sort(byOrder).map((r) => r._id));

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
          expect(v2).to.deep.equal(withoutMentions.map((r) => r._id));
          await api.db.collection(TRAY_RECORDS).deleteMany({ userId: user });
        },
      ),
      { numRuns: 25 },
    );
  });

  it('neither repeats nor skips unchanged records while new activity arrives between pages', async () => {
    const user = 'busy-walker';
    const records = Array.from({ length: 30 }, (_, i) =>
      aTrayRecord({ userId: user, targetId: `t${i}`, lastUpdate: T0 + Math.floor(i / 4) * 1000 }),
    );
    await insertRecords(api.db, records);
    const app = api.app({ now: () => T0 });
    const auth = await bearer(user);
    const collection = api.db.collection<TrayRecordDoc>(TRAY_RECORDS);
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
      const notYetSeen = records.find((r) => !seen.includes(r._id) && !moved.has(r._id));
      for (const id of [seen[0], notYetSeen?._id]) {
        if (id === undefined) continue;
        moved.add(id);
        await collection.updateOne({ _id: id }, { $set: { lastUpdate: T0 + tick++ * 1000 } });
      }
      await insertRecords(api.db, [
        aTrayRecord({ userId: user, targetId: `new${tick}`, lastUpdate: T0 + tick++ * 1000 }),
      ]);
    }
    const unchanged = records
      .filter((r) => !moved.has(r._id))
      .sort(byOrder)
      .map((r) => r._id);
    expect(seen.filter((id) => !moved.has(id))).to.deep.equal(unchanged);
    expect(new Set(seen).size).to.equal(seen.length);
  });
});

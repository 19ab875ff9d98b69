import { expect } from 'chai';
import { MongoClient, type Db } from 'mongodb';
import { DAY_MS } from '../../../../../shared/time/durations.ts';
import { TRAY_MUTES } from '../../../../../tray-service/storage/mongodb/collection-names.ts';
import { createMongoMutes } from '../../../../../tray-service/storage/mongodb/mutes/mongo-mutes.ts';
import type { MuteDoc } from '../../../../../tray-service/storage/mongodb/mutes/tray-mutes-collection.ts';
import { trayCollections } from '../../../../../tray-service/storage/mongodb/tray-collections.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { uniqueName } from '../../../../support/suite-resources.ts';
import { testStack } from '../../../../support/test-stack.ts';

const NOW = Date.UTC(2026, 10, 20, 10);
const RETENTION_DAYS = 90;

// What only MongoDB shows of mutes (their behaviour is in the storage conformance suite).
describe('MongoDB adapter: mutes', function () {
  this.timeout(60_000);
  const dbName = uniqueName('test');
  let client: MongoClient | undefined;
  let db: Db | undefined;

  before(async () => {
    client = new MongoClient(testStack().mongoUri);
    await client.connect();
    db = client.db(dbName);
    await ensureTestCollections(db, trayCollections);
  });
  after(async () => {
    await db?.dropDatabase();
    await client?.close();
  });

  // The purge keeps an ended span past its retention while a record of its owner counts from
  // before its end, by moving its expiry to that record's: the user limit read that expiry, so
  // such spans counted for good and the user's PUTs were refused, where only spans in force or
  // ended within the retention count.
  it('counts a span the purge keeps past its retention (its expiry moved) as ended, not toward the user limit', async () => {
    if (!db) throw new Error('no database');
    const mutes = createMongoMutes(db);
    const user = 'u-kept-spans';
    const put = (n: number, now: number, until: number | null = null) =>
      mutes.putMute(
        user,
        { targetType: 'post', targetId: `p-${n}` },
        until,
        now,
        RETENTION_DAYS,
        1_000,
        100,
        3,
      );
    for (const n of [1, 2, 3]) expect(await put(n, NOW + n, NOW + n + 1)).to.include({ createdAt: NOW + n });
    expect(await put(4, NOW + 10)).to.equal('too many user spans');
    // What the purge does to spans a record of the user still needs.
    await db
      .collection<MuteDoc>(TRAY_MUTES)
      .updateMany({ userId: user }, { $set: { expiresAt: new Date(NOW + 10 * RETENTION_DAYS * DAY_MS) } });
    const later = NOW + 4 + RETENTION_DAYS * DAY_MS + 1;
    expect(await put(4, later)).to.include({ createdAt: later, until: null });
  });
});

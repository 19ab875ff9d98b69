import { MongoClient, type Db } from 'mongodb';
import { TRAY_MUTES } from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import { createMongoMutes } from '../../../../../tray-service/storage/mongodb/mutes/mongo-mutes.ts';
import type { MuteDoc } from '../../../../../tray-service/storage/mongodb/collections/tray-mutes-collection.ts';
import { trayCollections } from '../../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { uniqueName } from '../../../../support/suite-resources.ts';
import { testStack } from '../../../../support/test-stack.ts';
import { expectKeptSpansLeftOutOfUserLimit } from '../../kept-spans-user-limit.ts';

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
    const mutes = db.collection<MuteDoc>(TRAY_MUTES);
    // What the purge does to spans a record of the user still needs.
    await expectKeptSpansLeftOutOfUserLimit(
      createMongoMutes(db),
      async (userId, expiresAt) =>
        void (await mutes.updateMany({ userId }, { $set: { expiresAt: new Date(expiresAt) } })),
      NOW,
      RETENTION_DAYS,
    );
  });
});

import { expect } from 'chai';
import {
  EVENTS,
  MEMBERSHIPS,
  TRAY_RECORD_CLAIMS,
  TRAY_RECORDS,
  MODERATION_DECISIONS,
  BLOCK_LIST,
  TRAY_READ_STATE,
} from '../../../../../tray-service/storage/mongodb/collections/collection-names.ts';
import {
  trayCollections,
  workerCollections,
} from '../../../../../tray-service/storage/mongodb/collections/tray-collections.ts';
import { assertIndexServed } from '../../../../support/assert-index-served.ts';
import { ensureTestCollections } from '../../../../support/ensure-test-collections.ts';
import { useMongo } from '../../../../support/suite-resources.ts';

describe("the tray service's collections (ensureCollections at start-up)", () => {
  const mongo = useMongo();
  const names = async (collection: string) =>
    (await mongo.db.collection(collection).listIndexes().toArray()).map((index) => String(index.name)).sort();

  it('declares every index once, each with the query it serves', () => {
    for (const spec of trayCollections) {
      const indexNames = spec.indexes.map((index) => index.name);
      expect(new Set(indexNames).size, spec.name).to.equal(indexNames.length);
      for (const index of spec.indexes) expect(index.serves, `${spec.name}.${index.name}`).to.match(/\S/);
      expect(
        indexNames.filter((name) => spec.retiredIndexes?.includes(name)),
        `${spec.name}: declared and retired`,
      ).to.deep.equal([]);
    }
    expect(new Set(trayCollections.map((spec) => spec.name)).size).to.equal(trayCollections.length);
  });

  // Found by the reliability suite: sent again for existing compound indexes, createIndexes made
  // FerretDB 1.24 panic and drop the connection, so every tray-service start after the first crashed.
  it('runs again (a restart) without error and keeps one copy of each index', async () => {
    const first = await ensureTestCollections(mongo.db, trayCollections);
    const before = await Promise.all(trayCollections.map((spec) => names(spec.name)));
    for (let n = 0; n < 2; n += 1)
      expect(await ensureTestCollections(mongo.db, trayCollections)).to.deep.equal(first);
    expect(await Promise.all(trayCollections.map((spec) => names(spec.name)))).to.deep.equal(before);
  });

  it('holds every declared index of every collection, whatever the server', async () => {
    await ensureTestCollections(mongo.db, trayCollections);
    for (const spec of trayCollections) {
      expect(await names(spec.name), spec.name).to.include.members(spec.indexes.map((index) => index.name));
    }
    expect(await names(TRAY_RECORDS)).to.include.members([
      'user_history',
      'box_unread',
      'box_unseen_since',
      'expiry',
    ]);
    expect(await names(EVENTS)).to.include.members(['admin_received_desc', 'expiry']);
    expect(await names(TRAY_RECORD_CLAIMS)).to.include('expiry');
    expect(await names(MODERATION_DECISIONS))
      .to.include('expiry')
      .and.to.have.lengthOf(8);
  });

  it("reports TTL only where the server made the worker's expiry indexes TTL ones", async () => {
    const { ttl } = await ensureTestCollections(mongo.db, workerCollections);
    const expiry = (await mongo.db.collection(TRAY_RECORDS).listIndexes().toArray()).find(
      (index) => index.name === 'expiry',
    );
    expect(expiry?.expireAfterSeconds !== undefined).to.equal(ttl);
  });

  for (const [collection, filter] of [
    [TRAY_RECORDS, { userId: 'u-1' }],
    [TRAY_RECORDS, { _id: 'r-1' }],
    [MEMBERSHIPS, { communityId: 'c-1' }],
    [EVENTS, { event: 'comment.didCreate' }],
    [BLOCK_LIST, { netid_uid: 'n-1' }],
    [TRAY_READ_STATE, { userId: 'u-1' }],
    [MODERATION_DECISIONS, { userId: 'u-1' }],
  ] as const) {
    it(`serves ${collection} ${JSON.stringify(filter)} from an index`, async () => {
      await ensureTestCollections(mongo.db, trayCollections);
      await assertIndexServed(mongo.db, { command: 'find', collection, filter }, trayCollections);
    });
  }
});

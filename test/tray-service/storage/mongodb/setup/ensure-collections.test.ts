import { expect } from 'chai';
import type { CommandStartedEvent, Db } from 'mongodb';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { acceptsTtlIndexes } from '../../../../../tray-service/storage/mongodb/setup/accepts-ttl-indexes.ts';
import type { CollectionSpec } from '../../../../../tray-service/storage/mongodb/collections/collection-spec.ts';
import {
  ensureCollection,
  sameIndexDefinition,
} from '../../../../../tray-service/storage/mongodb/setup/ensure-collection.ts';
import { ensureCollections } from '../../../../../tray-service/storage/mongodb/setup/ensure-collections.ts';
import { uniqueName, useMongo } from '../../../../support/suite-resources.ts';
import { withCollectionMethod } from '../../../../support/with-collection-method.ts';

const things: CollectionSpec = {
  name: 'things',
  indexes: [
    { name: 'owner_kind', key: { ownerId: 1, kind: 1 }, unique: true, serves: 'findOne({ownerId, kind})' },
    { name: 'owner_recent', key: { ownerId: 1, at: -1 }, serves: 'find({ownerId}).sort({at: -1})' },
    { name: 'expiry', key: { expiresAt: 1 }, expireAfterSeconds: 0, serves: 'TTL expiry' },
  ],
};
const others: CollectionSpec = { name: 'others', indexes: [] };

/** A logger whose lines the test reads. */
function capturingLogger() {
  const lines: { level: number; msg: string }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as { level: number; msg: string });
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

describe('ensureCollections', () => {
  const mongo = useMongo();
  const quiet = () => ({ logger: pino({ level: 'silent' }) });
  const otherDb = (): Db => mongo.client.db(uniqueName('ensure'));
  const dropped: Db[] = [];
  const fresh = () => {
    const db = otherDb();
    dropped.push(db);
    return db;
  };
  after(async () => {
    for (const db of dropped) await db.dropDatabase().catch(() => undefined);
  });
  const names = async (db: Db, collection: string) =>
    (await db.collection(collection).listIndexes().toArray()).map((index) => String(index.name)).sort();

  it('creates each collection with every declared index, TTL where the server accepts it', async () => {
    const db = fresh();
    const acceptsTtl = await acceptsTtlIndexes(db);
    expect(await ensureCollections(db, [things, others], quiet())).to.deep.equal({ ttl: acceptsTtl });
    const collections = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
    expect(collections).to.include.members(['things', 'others']);
    expect(await names(db, 'things')).to.deep.equal(['_id_', 'expiry', 'owner_kind', 'owner_recent']);
    const expiry = (await db.collection('things').listIndexes().toArray()).find((i) => i.name === 'expiry');
    expect(expiry?.expireAfterSeconds !== undefined).to.equal(acceptsTtl);
  });

  it('enforces the unique indexes', async () => {
    const db = fresh();
    await ensureCollections(db, [things], quiet());
    await db.collection('things').insertOne({ ownerId: 'o', kind: 'k' });
    await expect(db.collection('things').insertOne({ ownerId: 'o', kind: 'k' })).to.be.rejectedWith(
      /duplicate key/i,
    );
  });

  it('is idempotent: a second run changes nothing and fails nothing', async () => {
    const db = fresh();
    const first = await ensureCollections(db, [things, others], quiet());
    const held = await names(db, 'things');
    expect(await ensureCollections(db, [things, others], quiet())).to.deep.equal(first);
    expect(await names(db, 'things')).to.deep.equal(held);
  });

  it('survives several processes starting at once', async function () {
    this.timeout(60_000);
    const db = fresh();
    const results = await Promise.all(
      [0, 1, 2].map(() => ensureCollections(mongo.client.db(db.databaseName), [things, others], quiet())),
    );
    expect(new Set(results.map((result) => JSON.stringify(result))).size).to.equal(1);
    expect(await names(db, 'things')).to.deep.equal(['_id_', 'expiry', 'owner_kind', 'owner_recent']);
  });

  it('drops the indexes an earlier release made that this one retired, and leaves others alone', async () => {
    const db = fresh();
    await db.collection('things').createIndex({ bucket: 1 }, { name: 'history_bucket' });
    await db.collection('things').createIndex({ note: 1 }, { name: 'operators_own' });
    const retiring = { ...things, retiredIndexes: ['history_bucket', 'never_made'] };
    await ensureCollections(db, [retiring], quiet());
    expect(await names(db, 'things')).to.deep.equal([
      '_id_',
      'expiry',
      'operators_own',
      'owner_kind',
      'owner_recent',
    ]);
    await ensureCollections(db, [retiring], quiet());
  });

  it('logs the indexes in force and how data expires, with no warning', async () => {
    const db = fresh();
    const { logger, lines } = capturingLogger();
    const { ttl } = await ensureCollections(db, [things], { logger });
    expect(lines.filter((line) => line.level >= 40)).to.deep.equal([]);
    expect(lines.at(-1)?.msg).to.match(ttl ? /expiry by TTL indexes/ : /expiry by the periodic purge/);
  });
});

describe('ensureCollection: an index whose definition changed is re-created', () => {
  const mongo = useMongo();
  const context = { ttl: false, logger: pino({ level: 'silent' }) };
  const spec = (index: CollectionSpec['indexes'][number]): CollectionSpec => ({
    name: 'changing',
    indexes: [index],
  });
  const held = async (db: Db, name: string) =>
    (await db.collection('changing').listIndexes().toArray()).find((index) => index.name === name);
  const fresh = () => mongo.client.db(uniqueName('changing'));

  it('replaces an index whose keys changed under the same name', async () => {
    const db = fresh();
    await ensureCollection(db, spec({ name: 'by_owner', key: { ownerId: 1 }, serves: 'v1' }), context);
    await ensureCollection(
      db,
      spec({ name: 'by_owner', key: { ownerId: 1, at: -1 }, serves: 'v2' }),
      context,
    );
    expect((await held(db, 'by_owner'))?.key).to.deep.equal({ ownerId: 1, at: -1 });
    await db.dropDatabase();
  });

  it('replaces an index that became unique, which is then enforced', async () => {
    const db = fresh();
    await ensureCollection(db, spec({ name: 'by_owner', key: { ownerId: 1 }, serves: 'v1' }), context);
    await ensureCollection(
      db,
      spec({ name: 'by_owner', key: { ownerId: 1 }, unique: true, serves: 'v2' }),
      context,
    );
    expect((await held(db, 'by_owner'))?.unique).to.equal(true);
    await db.collection('changing').insertOne({ ownerId: 'o' });
    await expect(db.collection('changing').insertOne({ ownerId: 'o' })).to.be.rejectedWith(/duplicate key/i);
    await db.dropDatabase();
  });

  // Found by the reliability suite: sent again for existing compound indexes, createIndexes made
  // FerretDB 1.24 panic and drop the connection, so every tray-service start after the first crashed.
  it('leaves an unchanged index alone: a second run sends no createIndexes or dropIndexes', async () => {
    const db = fresh();
    const same = spec({ name: 'owner_at', key: { ownerId: 1, at: -1 }, unique: true, serves: 'v1' });
    await ensureCollection(db, same, context);
    const sent: string[] = [];
    const listen = (event: CommandStartedEvent) => void sent.push(event.commandName);
    // Every client of the suite monitors its commands (the command guard turns it on).
    mongo.client.on('commandStarted', listen);
    try {
      await ensureCollection(db, same, context);
    } finally {
      mongo.client.off('commandStarted', listen);
    }
    expect(sent).to.include('listIndexes');
    expect(sent).not.to.include.members(['createIndexes']);
    expect(sent).not.to.include.members(['dropIndexes']);
    await db.dropDatabase();
  });

  // Two processes starting a release that changed an index: the one that read the old definition
  // first dropped the index the other had just re-created (or was building: the build aborted, and
  // that process's start-up with it).
  it('does not drop an index another process re-created since it read the old definition', async () => {
    const db = fresh();
    const next = spec({ name: 'by_owner', key: { ownerId: 1, at: -1 }, serves: 'v2' });
    // Another process already re-created it under the new definition ...
    await ensureCollection(db, next, context);
    // ... after this one read the old one.
    let reads = 0;
    const stale = withCollectionMethod(db, 'changing', 'listIndexes', (original) => {
      return ((...args: Parameters<typeof original>) => {
        const cursor = original(...args);
        reads += 1;
        if (reads > 1) return cursor;
        const all = cursor.toArray.bind(cursor);
        const toArray = async () =>
          (await all()).map((index) =>
            index.name === 'by_owner' ? { ...index, key: { ownerId: 1 } } : index,
          );
        return Object.assign(cursor, { toArray });
      }) as typeof original;
    });
    const sent: string[] = [];
    const listen = (event: CommandStartedEvent) => void sent.push(event.commandName);
    mongo.client.on('commandStarted', listen);
    try {
      await ensureCollection(stale, next, context);
    } finally {
      mongo.client.off('commandStarted', listen);
    }
    expect(sent).not.to.include.members(['dropIndexes']);
    expect((await held(db, 'by_owner'))?.key).to.deep.equal({ ownerId: 1, at: -1 });
    await db.dropDatabase();
  });
});

describe('sameIndexDefinition', () => {
  const declared = { name: 'i', key: { a: 1, b: -1 } as const, serves: 'q' };
  const ttl = { ttl: true };

  it('holds for the same keys in the same order, whatever the name', () => {
    expect(sameIndexDefinition(declared, { name: 'other', key: { a: 1, b: -1 } }, ttl)).to.equal(true);
  });

  it('fails on another key order, direction, uniqueness or partial filter', () => {
    expect(sameIndexDefinition(declared, { key: { b: -1, a: 1 } }, ttl)).to.equal(false);
    expect(sameIndexDefinition(declared, { key: { a: 1, b: 1 } }, ttl)).to.equal(false);
    expect(sameIndexDefinition(declared, { key: { a: 1, b: -1 }, unique: true }, ttl)).to.equal(false);
    expect(
      sameIndexDefinition(
        declared,
        { key: { a: 1, b: -1 }, partialFilterExpression: { a: { $exists: true } } },
        ttl,
      ),
    ).to.equal(false);
  });

  it('compares the expiry only where the server accepts TTL indexes', () => {
    const expiring = { ...declared, expireAfterSeconds: 0 };
    expect(sameIndexDefinition(expiring, { key: { a: 1, b: -1 } }, ttl)).to.equal(false);
    expect(sameIndexDefinition(expiring, { key: { a: 1, b: -1 }, expireAfterSeconds: 0 }, ttl)).to.equal(
      true,
    );
    expect(sameIndexDefinition(expiring, { key: { a: 1, b: -1 } }, { ttl: false })).to.equal(true);
  });
});

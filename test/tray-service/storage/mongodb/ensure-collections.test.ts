import { expect } from 'chai';
import type { CommandStartedEvent, Db } from 'mongodb';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import type { CollectionSpec } from '../../../../tray-service/storage/mongodb/collection-spec.ts';
import { ginIndexName } from '../../../../tray-service/storage/mongodb/create-gin-indexes.ts';
import {
  ensureCollection,
  sameIndexDefinition,
} from '../../../../tray-service/storage/mongodb/ensure-collection.ts';
import { ensureCollections } from '../../../../tray-service/storage/mongodb/ensure-collections.ts';
import { withPostgres } from '../../../../tray-service/storage/mongodb/ferret-postgres-tables.ts';
import { useFerretOnPostgres } from '../../../support/use-ferret-on-postgres.ts';

const things: CollectionSpec = {
  name: 'things',
  indexes: [
    { name: 'owner_kind', key: { ownerId: 1, kind: 1 }, unique: true, serves: 'findOne({ownerId, kind})' },
    { name: 'owner_recent', key: { ownerId: 1, at: -1 }, serves: 'find({ownerId}).sort({at: -1})' },
    { name: 'expiry', key: { expiresAt: 1 }, expireAfterSeconds: 0, serves: 'TTL expiry' },
  ],
  equalityFields: ['ownerId', 'groupKey'],
};
const others: CollectionSpec = { name: 'others', indexes: [], equalityFields: ['userId'] };

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

describe('ensureCollections on FerretDB-on-PostgreSQL', () => {
  const ferret = useFerretOnPostgres();
  const quiet = () => ({ logger: pino({ level: 'silent' }), postgresUrl: ferret.postgresUrl });

  /** GIN expression indexes PostgreSQL holds for a FerretDB database, as `field` per index name. */
  async function ginIndexes(db: Db): Promise<Map<string, string>> {
    return withPostgres(ferret.postgresUrl, async (client) => {
      const { rows } = await client.query<{ indexname: string; indexdef: string }>(
        'SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1',
        [db.databaseName],
      );
      const gin = new Map<string, string>();
      for (const row of rows) {
        const match = /USING gin \(\(\(_jsonb -> '([^']+)'::text\)\) jsonb_path_ops\)/.exec(row.indexdef);
        if (match?.[1]) gin.set(row.indexname, match[1]);
      }
      return gin;
    });
  }
  const fieldsOf = (gin: Map<string, string>) => [...gin.values()].sort();

  it('creates each collection with a GIN index for _id and every equality field, no TTL', async () => {
    const db = ferret.otherDb();
    const result = await ensureCollections(db, [things, others], quiet());
    expect(result).to.deep.equal({ storage: 'ferretdb-postgresql', ttl: false });
    const names = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
    expect(names).to.include.members(['things', 'others']);
    expect(fieldsOf(await ginIndexes(db))).to.deep.equal(['_id', '_id', 'groupKey', 'ownerId', 'userId']);
  });

  it('creates the unique indexes through FerretDB (which enforces them) and skips the plain ones', async () => {
    const db = ferret.otherDb();
    await ensureCollections(db, [things], quiet());
    const indexes = (await db.collection('things').listIndexes().toArray()).map((i) => String(i.name));
    expect(indexes.sort()).to.deep.equal(['_id_', 'owner_kind']);
    await db.collection('things').insertOne({ ownerId: 'o', kind: 'k' });
    await expect(db.collection('things').insertOne({ ownerId: 'o', kind: 'k' })).to.be.rejectedWith(
      /duplicate key/i,
    );
  });

  it('is idempotent: a second run changes nothing and fails nothing', async () => {
    const db = ferret.otherDb();
    await ensureCollections(db, [things, others], quiet());
    const first = await ginIndexes(db);
    const again = await ensureCollections(db, [things, others], quiet());
    expect(again.storage).to.equal('ferretdb-postgresql');
    expect([...(await ginIndexes(db)).entries()].sort()).to.deep.equal([...first.entries()].sort());
  });

  it('survives several processes starting at once (each with its own connection)', async function () {
    this.timeout(60_000);
    const db = ferret.otherDb();
    const clients = await Promise.all([0, 1, 2].map(() => ferret.client.db(db.databaseName)));
    const results = await Promise.all(
      clients.map((each) => ensureCollections(each, [things, others], quiet())),
    );
    expect(results.map((r) => r.storage)).to.deep.equal(Array(3).fill('ferretdb-postgresql'));
    expect(fieldsOf(await ginIndexes(db))).to.deep.equal(['_id', '_id', 'groupKey', 'ownerId', 'userId']);
  });

  it('gives a dropped and recreated collection its GIN indexes back on the next run', async () => {
    const db = ferret.otherDb();
    await ensureCollections(db, [things, others], quiet());
    await db.collection('things').drop();
    await db.collection('things').insertOne({ ownerId: 'o' });
    expect(fieldsOf(await ginIndexes(db))).to.deep.equal(['_id', 'userId']);
    await ensureCollections(db, [things, others], quiet());
    expect(fieldsOf(await ginIndexes(db))).to.deep.equal(['_id', '_id', 'groupKey', 'ownerId', 'userId']);
  });

  it('ensureCollection, called by a store after it recreated a collection, uses the start-up context', async () => {
    const db = ferret.otherDb();
    await ensureCollections(db, [things], quiet());
    await db.collection('things').drop();
    const ensured = await ensureCollection(db, things);
    expect(ensured.gin).to.have.length(3);
    expect(fieldsOf(await ginIndexes(db))).to.deep.equal(['_id', 'groupKey', 'ownerId']);
  });

  it('warns at start-up, naming FERRETDB_POSTGRESQL_URL, when it is not set', async () => {
    const db = ferret.otherDb();
    const { logger, lines } = capturingLogger();
    const result = await ensureCollections(db, [others], { logger });
    expect(result.storage).to.equal('ferretdb-postgresql');
    const warning = lines.find((line) => line.level === 40);
    expect(warning?.msg)
      .to.match(/FERRETDB_POSTGRESQL_URL/)
      .and.match(/scan/);
    expect(await ginIndexes(db)).to.have.property('size', 0);
    expect(lines.find((line) => line.level === 30)?.msg).to.match(/unique indexes only/);
  });

  it('logs which index set is in force', async () => {
    const db = ferret.otherDb();
    const { logger, lines } = capturingLogger();
    await ensureCollections(db, [others], { logger, postgresUrl: ferret.postgresUrl });
    expect(lines.filter((line) => line.level >= 40)).to.deep.equal([]);
    expect(lines.at(-1)?.msg).to.match(/^FerretDB-on-PostgreSQL index set in force: .*GIN/);
  });

  it('warns, and makes no index, when the URL is not the database FerretDB uses', async () => {
    const db = ferret.otherDb();
    const elsewhere = `${ferret.postgresUrl.replace(/\/[^/]*$/, '')}/template1`;
    const { logger, lines } = capturingLogger();
    await ensureCollections(db, [others], { logger, postgresUrl: elsewhere });
    expect(lines.some((line) => line.level === 40 && /not FerretDB's database/.test(line.msg))).to.equal(
      true,
    );
    expect(await ginIndexes(db)).to.have.property('size', 0);
  });
});

describe('ensureCollection: an index whose definition changed is re-created', () => {
  const ferret = useFerretOnPostgres();
  const quiet = pino({ level: 'silent' });
  /** The MongoDB path (every declared index), run on FerretDB, the only server these tests have. */
  const asMongo = { storage: 'mongodb' as const, logger: quiet };
  const spec = (index: CollectionSpec['indexes'][number]): CollectionSpec => ({
    name: 'changing',
    indexes: [index],
    equalityFields: [],
  });
  const held = async (db: Db, name: string) =>
    (await db.collection('changing').listIndexes().toArray()).find((index) => index.name === name);

  it('on MongoDB, replaces an index whose keys changed under the same name', async () => {
    const db = ferret.otherDb();
    await ensureCollection(db, spec({ name: 'by_owner', key: { ownerId: 1 }, serves: 'v1' }), asMongo);
    await ensureCollection(
      db,
      spec({ name: 'by_owner', key: { ownerId: 1, at: -1 }, serves: 'v2' }),
      asMongo,
    );
    expect((await held(db, 'by_owner'))?.key).to.deep.equal({ ownerId: 1, at: -1 });
  });

  it('on MongoDB, replaces an index that became unique, which is then enforced', async () => {
    const db = ferret.otherDb();
    await ensureCollection(db, spec({ name: 'by_owner', key: { ownerId: 1 }, serves: 'v1' }), asMongo);
    await ensureCollection(
      db,
      spec({ name: 'by_owner', key: { ownerId: 1 }, unique: true, serves: 'v2' }),
      asMongo,
    );
    expect((await held(db, 'by_owner'))?.unique).to.equal(true);
    await db.collection('changing').insertOne({ ownerId: 'o' });
    await expect(db.collection('changing').insertOne({ ownerId: 'o' })).to.be.rejectedWith(/duplicate key/i);
  });

  it('on FerretDB, replaces a unique index whose keys changed', async () => {
    const db = ferret.otherDb();
    const context = {
      storage: 'ferretdb-postgresql' as const,
      logger: quiet,
      postgresUrl: ferret.postgresUrl,
    };
    const v1 = spec({ name: 'owner_kind', key: { ownerId: 1, kind: 1 }, unique: true, serves: 'v1' });
    await ensureCollection(db, v1, context);
    const v2 = spec({ name: 'owner_kind', key: { ownerId: 1, kind: 1, at: 1 }, unique: true, serves: 'v2' });
    await ensureCollection(db, v2, context);
    expect((await held(db, 'owner_kind'))?.key).to.deep.equal({ ownerId: 1, kind: 1, at: 1 });
  });

  it('leaves an unchanged index alone: a second run sends no createIndexes or dropIndexes', async () => {
    const db = ferret.otherDb();
    const same = spec({ name: 'owner_at', key: { ownerId: 1, at: -1 }, unique: true, serves: 'v1' });
    await ensureCollection(db, same, asMongo);
    const sent: string[] = [];
    const listen = (event: CommandStartedEvent) => void sent.push(event.commandName);
    ferret.client.on('commandStarted', listen);
    try {
      await ensureCollection(db, same, asMongo);
    } finally {
      ferret.client.off('commandStarted', listen);
    }
    expect(sent).to.include('listIndexes');
    expect(sent).not.to.include.members(['createIndexes']);
    expect(sent).not.to.include.members(['dropIndexes']);
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

describe('ginIndexName', () => {
  it('is deterministic and within PostgreSQL identifier length, also for long or odd field names', () => {
    const table = 'tray_records_4f6a2b1c';
    expect(ginIndexName(table, 'userId')).to.equal('tray_records_4f6a2b1c_userId_eq_gin');
    const long = ginIndexName(`${'t'.repeat(60)}_12345678`, 'a'.repeat(40));
    expect(long.length).to.be.at.most(63);
    expect(ginIndexName(`${'t'.repeat(60)}_12345678`, 'a'.repeat(40))).to.equal(long);
    expect(ginIndexName(table, 'we"ird')).to.match(/^[A-Za-z0-9_]+$/);
    expect(ginIndexName(table, 'a-b')).not.to.equal(ginIndexName(table, 'a_b'));
  });
});

import { isDeepStrictEqual } from 'node:util';
import { MongoServerError, type CreateIndexesOptions, type Db, type Document } from 'mongodb';
import type { Logger } from '../../../shared/logging/create-logger.ts';
import type { CollectionSpec, IndexSpec } from './collection-spec.ts';
import { createGinIndexes } from './create-gin-indexes.ts';
import { detectStorage, type Storage } from './detect-storage.ts';
import { ferretTable, withPostgres } from './ferret-postgres-tables.ts';

/** What ensureCollection needs to know about the server; ensureCollections records it per Db. */
export interface StorageContext {
  storage: Storage;
  /** FerretDB's PostgreSQL database (FERRETDB_POSTGRESQL_URL), where the GIN indexes are made. */
  postgresUrl?: string | undefined;
  logger?: Logger | undefined;
}

/** The index set in force for one collection. */
export interface EnsuredCollection {
  name: string;
  /** Indexes the server itself holds (listIndexes), by name. */
  indexes: string[];
  /** GIN expression indexes made in PostgreSQL (invisible to listIndexes), by name. */
  gin: string[];
  /** Whether each declared TTL index is a TTL index (never on FerretDB, which refuses them). */
  ttl: boolean;
}

const NAMESPACE_EXISTS = 48;
/** IndexOptionsConflict / IndexKeySpecsConflict: the same keys exist under another name. */
const ALREADY_SERVED = new Set([85, 86]);
const contexts = new WeakMap<Db, StorageContext>();

export function rememberStorageContext(db: Db, context: StorageContext): void {
  contexts.set(db, context);
}

/** Creates the collection unless it exists, so FerretDB has made its table. */
export async function createCollectionIfMissing(db: Db, name: string): Promise<void> {
  if ((await db.listCollections({ name }, { nameOnly: true }).toArray()).length > 0) return;
  try {
    await db.createCollection(name);
  } catch (error) {
    // Another process created it between the two calls.
    if (!(error instanceof MongoServerError && error.code === NAMESPACE_EXISTS)) throw error;
  }
}

/**
 * One collection's indexes, idempotently. Call it after (re)creating a collection at run time: the
 * GIN indexes vanish with a dropped collection's table. Without a context it uses the one
 * ensureCollections recorded for this Db at start-up.
 */
export async function ensureCollection(
  db: Db,
  spec: CollectionSpec,
  context?: StorageContext,
): Promise<EnsuredCollection> {
  const { storage, postgresUrl, logger } = context ??
    contexts.get(db) ?? { storage: await detectStorage(db) };
  await createCollectionIfMissing(db, spec.name);
  const collection = db.collection(spec.name);
  const found = new Map(
    (await collection.listIndexes().toArray()).map((index) => [String(index.name), index] as const),
  );
  const existing = new Set(found.keys());
  // On FerretDB a plain index is never used: its btree on `_jsonb->'f'` does not serve the
  // pushed-down `@>`, and ranges and sorts are not pushed down at all. It would only cost a write
  // per document, so only unique indexes (which FerretDB enforces) are created there.
  const wanted = storage === 'mongodb' ? spec.indexes : spec.indexes.filter((index) => index.unique);
  let ttl = storage === 'mongodb';
  for (const index of wanted) {
    // Only missing or changed ones: FerretDB 1.24 panics and drops the connection when
    // createIndexes is sent compound indexes that already exist (every start after the first crashed).
    const held = found.get(index.name);
    if (held && sameIndexDefinition(index, held, { ttl: storage === 'mongodb' })) continue;
    if (held) {
      // Same name, another definition (its keys, uniqueness, partial filter or TTL changed in a
      // release): the server would keep the old one, so it is replaced.
      logger?.warn(
        { collection: spec.name, index: index.name, was: describeIndex(held), now: describeIndex(index) },
        'index definition changed; re-creating it',
      );
      await dropIndexIfPresent(db, spec.name, index.name);
    }
    const created = await createIndex(db, spec.name, index, logger);
    if (index.expireAfterSeconds !== undefined && !created.ttl) ttl = false;
    existing.add(index.name);
  }
  if (storage === 'mongodb') {
    for (const index of spec.indexes) {
      if (index.expireAfterSeconds === undefined) continue;
      const info = (await collection.listIndexes().toArray()).find((found) => found.name === index.name);
      if (info?.expireAfterSeconds === undefined) ttl = false;
    }
  }
  const gin =
    storage === 'ferretdb-postgresql' && postgresUrl
      ? await ensureGin(postgresUrl, db.databaseName, spec, logger)
      : [];
  return { name: spec.name, indexes: [...existing].sort(), gin, ttl };
}

/**
 * Whether an index the server holds is the declared one: the same keys in the same order, the same
 * uniqueness and partial filter, and (where the server accepts TTL: `ttl`) the same expiry. Its
 * name aside, these decide what it serves and enforces. Pure.
 */
export function sameIndexDefinition(declared: IndexSpec, held: Document, options: { ttl: boolean }): boolean {
  const keys = (key: unknown) =>
    JSON.stringify(
      Object.entries((key ?? {}) as Record<string, unknown>).map(([field, order]) => [field, Number(order)]),
    );
  return (
    keys(held.key) === keys(declared.key) &&
    Boolean(held.unique) === Boolean(declared.unique) &&
    isDeepStrictEqual(held.partialFilterExpression, declared.partialFilterExpression) &&
    (!options.ttl || held.expireAfterSeconds === declared.expireAfterSeconds)
  );
}

/** What a log line says of an index definition. */
function describeIndex(index: Document | IndexSpec) {
  return {
    key: index.key as unknown,
    ...(index.unique ? { unique: true } : {}),
    ...(index.partialFilterExpression
      ? { partialFilterExpression: index.partialFilterExpression as unknown }
      : {}),
    ...(index.expireAfterSeconds === undefined
      ? {}
      : { expireAfterSeconds: index.expireAfterSeconds as unknown }),
  };
}

/** IndexNotFound: another process starting at the same time dropped it first. */
const INDEX_NOT_FOUND = 27;

async function dropIndexIfPresent(db: Db, collection: string, name: string): Promise<void> {
  try {
    await db.collection(collection).dropIndex(name);
  } catch (error) {
    if (!(error instanceof MongoServerError && error.code === INDEX_NOT_FOUND)) throw error;
  }
}

async function createIndex(
  db: Db,
  collection: string,
  index: IndexSpec,
  logger: Logger | undefined,
): Promise<{ ttl: boolean }> {
  const options: CreateIndexesOptions = {
    name: index.name,
    ...(index.unique ? { unique: true } : {}),
    ...(index.partialFilterExpression ? { partialFilterExpression: index.partialFilterExpression } : {}),
  };
  try {
    const ttl = index.expireAfterSeconds !== undefined;
    await db
      .collection(collection)
      .createIndex(index.key, ttl ? { ...options, expireAfterSeconds: index.expireAfterSeconds } : options);
    return { ttl };
  } catch (error) {
    if (index.expireAfterSeconds !== undefined && /expireAfterSeconds/i.test(String(error))) {
      await db.collection(collection).createIndex(index.key, options);
      return { ttl: false };
    }
    if (
      error instanceof MongoServerError &&
      typeof error.code === 'number' &&
      ALREADY_SERVED.has(error.code)
    ) {
      logger?.warn(
        { collection, index: index.name, err: error.message },
        'index keys already exist under another name; that index serves the query',
      );
      return { ttl: false };
    }
    throw error;
  }
}

async function ensureGin(
  postgresUrl: string,
  dbName: string,
  spec: CollectionSpec,
  logger: Logger | undefined,
): Promise<string[]> {
  const fields = [...new Set(['_id', ...spec.equalityFields])];
  return withPostgres(postgresUrl, async (client) => {
    const table = await ferretTable(client, dbName, spec.name);
    if (!table) {
      logger?.warn(
        { collection: spec.name, db: dbName },
        "FERRETDB_POSTGRESQL_URL has no FerretDB table for this collection: it is not FerretDB's database; queries will scan",
      );
      return [];
    }
    return createGinIndexes(client, dbName, table, fields);
  });
}

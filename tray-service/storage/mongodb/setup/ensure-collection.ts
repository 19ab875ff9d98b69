import { isDeepStrictEqual } from 'node:util';
import { MongoServerError, type CreateIndexesOptions, type Db, type Document } from 'mongodb';
import type { Logger } from '../../../../shared/logging/create-logger.ts';
import type { CollectionSpec, IndexSpec } from '../collections/collection-spec.ts';

/** What ensureCollection needs to know about the server (ensureCollections asks it once). */
export interface EnsureContext {
  /** Whether the server makes TTL indexes (acceptsTtlIndexes). */
  ttl: boolean;
  logger?: Logger | undefined;
}

/** The indexes in force for one collection. */
export interface EnsuredCollection {
  name: string;
  /** Indexes the server holds (listIndexes), by name. */
  indexes: string[];
  /** Whether each declared TTL index is a TTL index (never on FerretDB, which refuses them). */
  ttl: boolean;
}

const NAMESPACE_EXISTS = 48;
/** IndexOptionsConflict / IndexKeySpecsConflict: the same keys exist under another name. */
const ALREADY_SERVED = new Set([85, 86]);

/** Creates the collection unless it exists. */
export async function createCollectionIfMissing(db: Db, name: string): Promise<void> {
  if ((await db.listCollections({ name }, { nameOnly: true }).toArray()).length > 0) return;
  try {
    await db.createCollection(name);
  } catch (error) {
    // Another process created it between the two calls.
    if (!(error instanceof MongoServerError && error.code === NAMESPACE_EXISTS)) throw error;
  }
}

/** One collection and its declared indexes, idempotently. */
export async function ensureCollection(
  db: Db,
  spec: CollectionSpec,
  context: EnsureContext,
): Promise<EnsuredCollection> {
  const { logger } = context;
  await createCollectionIfMissing(db, spec.name);
  const collection = db.collection(spec.name);
  const found = new Map(
    (await collection.listIndexes().toArray()).map((index) => [String(index.name), index] as const),
  );
  const existing = new Set(found.keys());
  for (const name of spec.retiredIndexes ?? []) {
    if (!found.has(name)) continue;
    logger?.info({ collection: spec.name, index: name }, 'index no longer used; dropping it');
    await dropIndexIfPresent(db, spec.name, name);
    existing.delete(name);
  }
  let ttl = context.ttl;
  for (const index of spec.indexes) {
    // Only missing or changed ones: FerretDB 1.24 panics and drops the connection when
    // createIndexes is sent compound indexes that already exist (every start after the first crashed).
    let held = found.get(index.name);
    if (held && sameIndexDefinition(index, held, { ttl: context.ttl })) continue;
    // Read again right before the drop: another process starting this release together may have
    // dropped and re-created it since (or be building it: a create of the same index then waits
    // for that build); dropped, its build would abort, and that process's start-up with it.
    if (held) held = (await collection.listIndexes().toArray()).find((one) => one.name === index.name);
    if (held && sameIndexDefinition(index, held, { ttl: context.ttl })) continue;
    if (held) {
      // Same name, another definition (its keys, uniqueness, partial filter or TTL changed in a
      // release): the server would keep the old one, so it is replaced.
      logger?.warn(
        { collection: spec.name, index: index.name, was: describeIndex(held), now: describeIndex(index) },
        'index definition changed; re-creating it',
      );
      await dropIndexIfPresent(db, spec.name, index.name);
    }
    const created = await createIndex(db, spec.name, index, context);
    if (index.expireAfterSeconds !== undefined && !created.ttl) ttl = false;
    existing.add(index.name);
  }
  if (context.ttl) {
    for (const index of spec.indexes) {
      if (index.expireAfterSeconds === undefined) continue;
      const info = (await collection.listIndexes().toArray()).find((found) => found.name === index.name);
      if (info?.expireAfterSeconds === undefined) ttl = false;
    }
  }
  return { name: spec.name, indexes: [...existing].sort(), ttl };
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
  { ttl: acceptsTtl, logger }: EnsureContext,
): Promise<{ ttl: boolean }> {
  const options: CreateIndexesOptions = {
    name: index.name,
    ...(index.unique ? { unique: true } : {}),
    ...(index.partialFilterExpression ? { partialFilterExpression: index.partialFilterExpression } : {}),
  };
  try {
    // Not even asked of a server that refuses TTL: the index is made without it.
    const ttl = acceptsTtl && index.expireAfterSeconds !== undefined;
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

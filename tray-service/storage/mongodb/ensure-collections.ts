import type { Db } from 'mongodb';
import type { Logger } from '../../../shared/logging/create-logger.ts';
import type { CollectionSpec } from './collection-spec.ts';
import { detectStorage, type Storage } from './detect-storage.ts';
import { createCollectionIfMissing, ensureCollection, rememberStorageContext } from './ensure-collection.ts';

export interface EnsureCollectionsOptions {
  logger: Logger;
  /** FERRETDB_POSTGRESQL_URL: FerretDB's PostgreSQL database, where the GIN indexes are made. */
  postgresUrl?: string | undefined;
}

export interface EnsuredStorage {
  storage: Storage;
  /** Whether every declared TTL index is one (MongoDB); otherwise only the periodic purge expires data. */
  ttl: boolean;
}

/**
 * The start-up call of each service: every collection it uses exists with the index set that
 * serves its queries on this server. Idempotent and safe when several processes start at once.
 * MongoDB: the declared indexes (TTL included). FerretDB: the unique ones, and on PostgreSQL a GIN
 * expression index for `_id` and each equality field (see ensureCollection).
 */
export async function ensureCollections(
  db: Db,
  specs: readonly CollectionSpec[],
  options: EnsureCollectionsOptions,
): Promise<EnsuredStorage> {
  const { logger, postgresUrl } = options;
  // First, so FerretDB has a table to explain: that is how its backend is told (detectStorage).
  for (const spec of specs) await createCollectionIfMissing(db, spec.name);
  const storage = await detectStorage(db, { postgresUrl });
  if (storage === 'ferretdb-postgresql' && !postgresUrl) {
    logger.warn(
      { storage },
      'FerretDB on PostgreSQL without FERRETDB_POSTGRESQL_URL: no index serves an equality filter, so every query scans its whole collection. Set FERRETDB_POSTGRESQL_URL to the PostgreSQL database FerretDB stores its data in (its --postgresql-url) and restart',
    );
  }
  const context = { storage, postgresUrl, logger };
  rememberStorageContext(db, context);
  let ttl = storage === 'mongodb';
  const collections = [];
  for (const spec of specs) {
    const ensured = await ensureCollection(db, spec, context);
    if (spec.indexes.some((index) => index.expireAfterSeconds !== undefined) && !ensured.ttl) ttl = false;
    collections.push(ensured);
  }
  logger.info(
    { storage, ttl, collections },
    storage === 'mongodb'
      ? 'MongoDB index set in force: declared indexes, TTL expiry'
      : storage === 'ferretdb-postgresql' && postgresUrl
        ? 'FerretDB-on-PostgreSQL index set in force: unique indexes, GIN expression indexes for equality filters; expiry by periodic purge'
        : 'FerretDB index set in force: unique indexes only (queries scan); expiry by periodic purge',
  );
  return { storage, ttl };
}

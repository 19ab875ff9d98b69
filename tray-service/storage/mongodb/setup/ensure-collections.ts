import type { Db } from 'mongodb';
import type { Logger } from '../../../../shared/logging/create-logger.ts';
import { acceptsTtlIndexes } from './accepts-ttl-indexes.ts';
import type { CollectionSpec } from '../collections/collection-spec.ts';
import { ensureCollection } from './ensure-collection.ts';

export interface EnsureCollectionsOptions {
  logger: Logger;
}

export interface EnsuredStorage {
  /** Whether every declared TTL index is one (MongoDB); otherwise only the periodic purge expires data. */
  ttl: boolean;
}

/**
 * The start-up call of each service: every collection it uses exists with the indexes its
 * queries need, the same set on every server (TTL ones where the server accepts TTL).
 * Idempotent and safe when several processes start at once.
 */
export async function ensureCollections(
  db: Db,
  specs: readonly CollectionSpec[],
  options: EnsureCollectionsOptions,
): Promise<EnsuredStorage> {
  const { logger } = options;
  const context = { ttl: await acceptsTtlIndexes(db), logger };
  let ttl = context.ttl;
  const collections = [];
  for (const spec of specs) {
    const ensured = await ensureCollection(db, spec, context);
    if (spec.indexes.some((index) => index.expireAfterSeconds !== undefined) && !ensured.ttl) ttl = false;
    collections.push(ensured);
  }
  logger.info(
    { ttl, collections },
    ttl
      ? 'MongoDB indexes in force; expiry by TTL indexes and the periodic purge'
      : 'MongoDB indexes in force; this server refuses TTL indexes: expiry by the periodic purge',
  );
  return { ttl };
}

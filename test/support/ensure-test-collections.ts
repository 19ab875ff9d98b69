import type { Db } from 'mongodb';
import { pino } from 'pino';
import type { CollectionSpec } from '../../tray-service/storage/mongodb/collections/collection-spec.ts';
import {
  ensureCollections,
  type EnsuredStorage,
} from '../../tray-service/storage/mongodb/setup/ensure-collections.ts';

/** ensureCollections as a service's start-up runs it, on the test stack's server. */
export function ensureTestCollections(db: Db, specs: readonly CollectionSpec[]): Promise<EnsuredStorage> {
  return ensureCollections(db, specs, { logger: pino({ level: 'silent' }) });
}

import type { TrayStorageConfig } from '../../shared/config/tray-storage-config.ts';
import type { Logger } from '../../shared/logging/create-logger.ts';
import { openMongoStorage } from './mongodb/open-mongo-storage.ts';
import type { TrayStorage } from './port.ts';
import type { MigrationEvent } from './postgres/migrate.ts';
import { openPostgresStorage } from './postgres/open-postgres-storage.ts';

export interface OpenStorageOptions {
  /** Names this process to the database server (pg_stat_activity, MongoDB's client metadata). */
  appName?: string;
  /** TRAY_FANOUT_BATCH: members per round of a community post's fan-out, on either adapter. */
  fanOutBatch?: number;
  /** TRAY_RETENTION_DAYS, for records the MongoDB adapter brings from an older shape at open. */
  retentionDays?: number;
  /**
   * For a process that only reads (an export, whose database role may be read-only, or which may
   * read a replica): the open changes nothing (no migrations, indexes or upgrade passes) and
   * refuses, with SchemaBehindError, a database an older version left behind.
   */
  readOnly?: boolean;
}

/**
 * The one place the storage adapter is chosen (shared/config/tray-storage-config.ts decides
 * which): everything above this sees only the storage port.
 */
export async function openStorage(
  config: TrayStorageConfig,
  logger: Logger,
  options: OpenStorageOptions = {},
): Promise<TrayStorage> {
  const appName = options.appName ?? 'tray-service';
  if (config.engine === 'postgres') {
    const storage = await openPostgresStorage(config.url, {
      poolSize: config.poolSize,
      statementTimeoutMs: config.statementTimeoutMs,
      applicationName: appName,
      ...(options.fanOutBatch === undefined ? {} : { fanOutBatch: options.fanOutBatch }),
      ...(options.readOnly ? { readOnly: true } : {}),
      onMigration: (event) => logMigration(logger, event),
    });
    logger.info({ engine: storage.engine }, 'tray storage open');
    return storage;
  }
  const storage = await openMongoStorage(config.uri, config.dbName, {
    appName,
    logger,
    ...(options.fanOutBatch === undefined ? {} : { fanOutBatch: options.fanOutBatch }),
    ...(options.retentionDays === undefined ? {} : { retentionDays: options.retentionDays }),
    ...(options.readOnly ? { readOnly: true } : {}),
  });
  logger.info({ engine: storage.engine, db: config.dbName }, 'tray storage open');
  return storage;
}

/**
 * A migration may run for minutes after an upgrade, before the service listens: each one's start
 * and end are logged, and each wait for a lock another session holds (docs/storage.md).
 */
function logMigration(logger: Logger, event: MigrationEvent): void {
  // `migration`, not `name`: the services' logger names itself with `name`, and a line must not
  // carry one key twice (log tools keep either).
  const { kind, name: migration, ...rest } = event;
  const fields = { ...rest, migration };
  if (kind === 'applying') logger.info(fields, 'schema migration applying');
  else if (kind === 'applied') logger.info(fields, 'schema migration applied');
  else if (kind === 'retry')
    logger.warn(
      fields,
      'schema migration rolled back by the server for another session (a deadlock); trying again',
    );
  else
    logger.warn(
      fields,
      'schema migration waited for a lock another session holds (a long query or an open transaction on its tables); rolled back so their traffic goes on, trying again',
    );
}

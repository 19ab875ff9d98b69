import { ConnectionString } from 'mongodb-connection-string-url';
import { pino } from 'pino';
import { resolveTrayStorage, trayStorageShape } from '../../shared/config/tray-storage-config.ts';
import { trayWorkerShape } from '../../shared/config/tray-worker-config.ts';
import { createLogger } from '../../shared/logging/create-logger.ts';
import { openStorage } from '../../tray-service/storage/open-storage.ts';
import type { TrayStorage } from '../../tray-service/storage/port.ts';
import { scriptEnv } from './cli.ts';

/** The variables naming the tray's storage, as the tray service reads them (docs/configuration.md). */
export const storageVariables =
  'TRAY_STORAGE, DATABASE_URL (PostgreSQL) or MONGODB_URI and MONGODB_DB (MongoDB), as for the tray service';

/**
 * The tray's storage as the tray service opens it, from the same variables (TRAY_STORAGE,
 * DATABASE_URL, MONGODB_URI, ...): an operator script reads and writes exactly what the service
 * does. A missing or ambiguous choice is a ConfigError (exit 2, one line naming the variables).
 */
export async function openScriptStorage(
  appName: string,
  options: { readOnly?: boolean } = {},
): Promise<TrayStorage> {
  // The adapter may bring older records into shape at open (MongoDB): with the service's retention.
  const env = scriptEnv({
    ...trayStorageShape,
    TRAY_RETENTION_DAYS: trayWorkerShape.TRAY_RETENTION_DAYS,
    TRAY_FANOUT_BATCH: trayWorkerShape.TRAY_FANOUT_BATCH,
  });
  // Its warnings on stderr: stdout is the script's own (a summary an operator or a script reads).
  const logger = createLogger({
    name: appName,
    level: 'warn',
    destination: pino.destination({ dest: 2, sync: true }),
  });
  return openStorage(resolveTrayStorage(env), logger, {
    appName,
    retentionDays: env.TRAY_RETENTION_DAYS,
    fanOutBatch: env.TRAY_FANOUT_BATCH,
    ...(options.readOnly ? { readOnly: true } : {}),
  });
}

/**
 * Which database the storage variables name, without credentials (`postgres db.example:5432/tray`,
 * `mongodb a:27017,b:27017/tray`): what a file a script leaves for a later run records, so that
 * run can tell it reads the same one.
 */
export function scriptStorageName(): string {
  const config = resolveTrayStorage(scriptEnv(trayStorageShape));
  if (config.engine === 'postgres') {
    const url = new URL(config.url);
    return `postgres ${url.host}${url.pathname}`;
  }
  return `mongodb ${new ConnectionString(config.uri).hosts.join(',')}/${config.dbName}`;
}

import { z } from 'zod';
import { ConfigError } from '../errors/config-error.ts';
import { ConnectionString } from 'mongodb-connection-string-url';
import {
  IDENTIFIER,
  intInRange,
  optionalIdentifier,
  positiveInt,
  url,
  PASSWORD_NOT_SPLIT,
  USERINFO_DECODES,
} from './env-types.ts';

/**
 * A MongoDB connection string, read by the driver's own parser: a replica set's list of hosts
 * (`mongodb://a:27017,b:27017/?replicaSet=rs0`) is no WHATWG URL, which refused it. The parser's
 * message is not repeated: it may quote the string, credentials and all.
 */
const mongoUri = z
  .string()
  .refine(
    (value) => {
      try {
        return new ConnectionString(value).hosts.length > 0;
      } catch {
        return false;
      }
    },
    {
      error:
        'expected a MongoDB connection string: mongodb://host[:port][,host...][/database][?options] or mongodb+srv://',
    },
  )
  .refine(...USERINFO_DECODES);

/** Variables choosing and tuning the tray's storage (docs/storage.md, docs/configuration.md). */
export const trayStorageShape = {
  /** The storage adapter; when unset, the one whose URL is set (DATABASE_URL or MONGODB_URI). */
  TRAY_STORAGE: z.enum(['postgres', 'mongodb'], { error: 'expected "postgres" or "mongodb"' }).optional(),
  /** The PostgreSQL database of the tray (TLS and other libpq settings in the URL itself). */
  DATABASE_URL: url(['postgres', 'postgresql'])
    .refine(...PASSWORD_NOT_SPLIT)
    .optional(),
  /** Connections of each tray process to PostgreSQL. */
  PG_POOL_SIZE: positiveInt(10, 1_000),
  /** Longest a PostgreSQL statement may run before the server cancels it. */
  PG_STATEMENT_TIMEOUT_MS: intInRange(10_000, 100, 3_600_000),
  /** The MongoDB deployment of the tray, when it runs on MongoDB (the receiver never reads it). */
  MONGODB_URI: mongoUri.optional(),
  /** The tray's database; when unset, `tray`, unless MONGODB_URI names another (mongodbDatabase). */
  MONGODB_DB: optionalIdentifier,
};

export type TrayStorageConfig =
  | { engine: 'postgres'; url: string; poolSize: number; statementTimeoutMs: number }
  | { engine: 'mongodb'; uri: string; dbName: string };

/** The parsed variables the choice is made from. */
export interface TrayStorageVariables {
  TRAY_STORAGE?: 'postgres' | 'mongodb' | undefined;
  DATABASE_URL?: string | undefined;
  PG_POOL_SIZE: number;
  PG_STATEMENT_TIMEOUT_MS: number;
  MONGODB_URI?: string | undefined;
  MONGODB_DB?: string | undefined;
}

function fail(variable: string, message: string): never {
  throw new ConfigError([{ variable, message }]);
}

function postgres(vars: TrayStorageVariables, url: string): TrayStorageConfig {
  return {
    engine: 'postgres',
    url,
    poolSize: vars.PG_POOL_SIZE,
    statementTimeoutMs: vars.PG_STATEMENT_TIMEOUT_MS,
  };
}

function mongodb(vars: TrayStorageVariables, uri: string): TrayStorageConfig {
  return { engine: 'mongodb', uri, dbName: vars.MONGODB_DB ?? mongodbDatabase(uri) };
}

/** MongoDB's own databases: a URI names one (`admin`, mostly) only to sign in there. */
const SYSTEM_DATABASES = new Set(['admin', 'local', 'config']);

/**
 * The tray's database when MONGODB_DB is unset: `tray`, as always. A URI that names another
 * database (the driver's default database) is ambiguous: the operator may mean it, while a tray
 * that has run on `tray` until now keeps its records there. Neither is guessed (taking the URI's
 * would open an empty database and show every inbox empty): start-up stops and says to set
 * MONGODB_DB. One of MongoDB's own databases is named to sign in, and means nothing here.
 */
function mongodbDatabase(uri: string): string {
  const path = new ConnectionString(uri).pathname.replace(/^\//, '');
  let name = path;
  try {
    name = decodeURIComponent(path);
  } catch {
    // A lone "%": named as it is written.
  }
  if (name === '' || name === 'tray' || SYSTEM_DATABASES.has(name)) return 'tray';
  return fail(
    'MONGODB_DB',
    `unset, while MONGODB_URI names the database "${name}": set MONGODB_DB=${IDENTIFIER.test(name) ? name : '<name>'} ` +
      'to use it, or MONGODB_DB=tray to keep the database the tray has used by default',
  );
}

/**
 * The storage adapter and its connection. TRAY_STORAGE decides when set; otherwise the one URL
 * that is set does, and an ambiguous or missing choice stops start-up with one line naming the
 * variables (a guess could write a deployment's tray into the wrong database).
 */
export function resolveTrayStorage(vars: TrayStorageVariables): TrayStorageConfig {
  const { TRAY_STORAGE: chosen, DATABASE_URL: databaseUrl, MONGODB_URI: mongoUri } = vars;
  if (chosen === 'postgres') {
    return databaseUrl === undefined
      ? fail('DATABASE_URL', 'TRAY_STORAGE=postgres needs a postgres:// URL of the tray database')
      : postgres(vars, databaseUrl);
  }
  if (chosen === 'mongodb') {
    return mongoUri === undefined
      ? fail('MONGODB_URI', 'TRAY_STORAGE=mongodb needs a mongodb:// URL of the tray database')
      : mongodb(vars, mongoUri);
  }
  if (databaseUrl !== undefined && mongoUri !== undefined) {
    fail(
      'DATABASE_URL, MONGODB_URI',
      'both are set: set TRAY_STORAGE to "postgres" or "mongodb" to choose, or unset one of them',
    );
  }
  if (databaseUrl !== undefined) return postgres(vars, databaseUrl);
  if (mongoUri !== undefined) return mongodb(vars, mongoUri);
  return fail(
    'DATABASE_URL, MONGODB_URI',
    'no tray storage: set DATABASE_URL (PostgreSQL) or MONGODB_URI (MongoDB)',
  );
}

import type { Db, Document } from 'mongodb';
import { ferretSchemaExists } from './ferret-postgres-tables.ts';

/** The server behind MONGODB_URI, as far as indexes are concerned. */
export type Storage = 'mongodb' | 'ferretdb-postgresql' | 'ferretdb-other';

const detected = new WeakMap<Db, Promise<Storage>>();

/**
 * Which server this is, asked once per Db. FerretDB answers buildInfo with `ferretdbVersion`; it
 * names its backend nowhere (buildInfo, getParameter, serverStatus, getCmdLineOpts), but its
 * explain returns the backend's own plan, and only PostgreSQL's has a `Node Type`. That needs a
 * collection to exist (FerretDB explains a missing one as `{}`), so ensureCollections creates them
 * first; with none, a FerretDB whose metadata schema is found through `postgresUrl` counts as on
 * PostgreSQL.
 */
export function detectStorage(db: Db, options: { postgresUrl?: string | undefined } = {}): Promise<Storage> {
  let storage = detected.get(db);
  if (!storage) {
    storage = detect(db, options.postgresUrl);
    detected.set(db, storage);
    // A failed probe (server down at start-up) is asked again next time, not remembered.
    storage.catch(() => detected.delete(db));
  }
  return storage;
}

async function detect(db: Db, postgresUrl: string | undefined): Promise<Storage> {
  const info = await db.admin().command({ buildInfo: 1 });
  if (typeof info.ferretdbVersion !== 'string') return 'mongodb';
  const [collection] = await db.listCollections({}, { nameOnly: true }).toArray();
  if (collection) {
    const explained: Document = await db.command({ explain: { find: collection.name, filter: {} } });
    const plan = (explained.queryPlanner as { Plan?: Record<string, unknown> } | undefined)?.Plan;
    if (plan) return typeof plan['Node Type'] === 'string' ? 'ferretdb-postgresql' : 'ferretdb-other';
  }
  if (postgresUrl && (await ferretSchemaExists(postgresUrl, db.databaseName).catch(() => false))) {
    return 'ferretdb-postgresql';
  }
  return 'ferretdb-other';
}

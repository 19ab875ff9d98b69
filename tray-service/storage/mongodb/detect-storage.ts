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
  const known = detected.get(db);
  if (known) return known;
  const answer = detect(db, options.postgresUrl);
  const storage = answer.then((found) => found.storage);
  // Remembered only when the server said so: not a failed probe (server down at start-up), and not
  // a guess made before any collection existed.
  detected.set(db, storage);
  answer.then(
    (found) => {
      if (!found.certain) detected.delete(db);
    },
    () => detected.delete(db),
  );
  return storage;
}

async function detect(
  db: Db,
  postgresUrl: string | undefined,
): Promise<{ storage: Storage; certain: boolean }> {
  const info = await db.admin().command({ buildInfo: 1 });
  if (typeof info.ferretdbVersion !== 'string') return { storage: 'mongodb', certain: true };
  const [collection] = await db.listCollections({}, { nameOnly: true }).toArray();
  if (collection) {
    const explained: Document = await db.command({ explain: { find: collection.name, filter: {} } });
    const plan = (explained.queryPlanner as { Plan?: Record<string, unknown> } | undefined)?.Plan;
    if (plan) {
      const storage = typeof plan['Node Type'] === 'string' ? 'ferretdb-postgresql' : 'ferretdb-other';
      return { storage, certain: true };
    }
  }
  if (postgresUrl && (await ferretSchemaExists(postgresUrl, db.databaseName).catch(() => false))) {
    return { storage: 'ferretdb-postgresql', certain: true };
  }
  return { storage: 'ferretdb-other', certain: false };
}

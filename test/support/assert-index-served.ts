import type { Db, Document } from 'mongodb';
import type { CollectionSpec } from '../../tray-service/storage/mongodb/collections/collection-spec.ts';
import { declaredIndexServing, type Selection } from './declared-index-serving.ts';

/** Winning-plan stages that read an index (EXPRESS_* and IDHACK: MongoDB's `_id` fast paths). */
const MONGO_INDEX_STAGE =
  /^(IXSCAN|COUNT_SCAN|DISTINCT_SCAN|IDHACK|EXPRESS_IXSCAN|EXPRESS_CLUSTERED_IXSCAN)$/;

const ferretServers = new WeakMap<Db, Promise<boolean>>();

/** Whether the test server is FerretDB (it names itself in buildInfo), asked once per Db. */
function isFerretDb(db: Db): Promise<boolean> {
  let known = ferretServers.get(db);
  if (!known) {
    known = db
      .admin()
      .command({ buildInfo: 1 })
      .then((info) => typeof info.ferretdbVersion === 'string');
    ferretServers.set(db, known);
  }
  return known;
}

/**
 * Fails unless MongoDB answers this selection from an index. On MongoDB (MONGODB_URI naming one)
 * the server's own plan is read: an index scan, no collection scan, no sort in memory. FerretDB,
 * the test server here, plans in PostgreSQL without the adapter's indexes' meaning, so there the
 * selection is checked against the collection's declared indexes by MongoDB's planning rules
 * (declaredIndexServing), and the index that serves it must be on the server with its declared keys.
 */
export async function assertIndexServed(
  db: Db,
  selection: Selection,
  specs: readonly CollectionSpec[],
): Promise<void> {
  const what = `${selection.command} ${selection.collection} ${JSON.stringify(selection.filter)}${selection.sort ? ` sort ${JSON.stringify(selection.sort)}` : ''}`;
  if (!(await isFerretDb(db))) return assertMongoServed(db, selection, what);
  const spec = specs.find((each) => each.name === selection.collection);
  if (!spec) throw new Error(`${what}: no declared collection ${selection.collection}`);
  const verdict = declaredIndexServing(selection, spec.indexes);
  if (!verdict.served) throw new Error(`${what}: not served by an index: ${verdict.why}`);
  // And the server has that index, with the declared keys: a declaration start-up never created
  // serves nothing.
  const present = await db.collection(selection.collection).listIndexes().toArray();
  for (const name of verdict.index.split(', ')) {
    const declared = name === '_id_' ? { _id: 1 } : spec.indexes.find((index) => index.name === name)?.key;
    const found = present.find((index) => index.name === name);
    if (!found || JSON.stringify(found.key) !== JSON.stringify(declared)) {
      throw new Error(`${what}: the index ${name} is not on the server as declared`);
    }
  }
}

async function assertMongoServed(db: Db, selection: Selection, what: string): Promise<void> {
  const { command, collection, filter, sort } = selection;
  const explain =
    command === 'find'
      ? { find: collection, filter, ...(sort ? { sort } : {}) }
      : command === 'count'
        ? { count: collection, query: filter }
        : command === 'update'
          ? {
              update: collection,
              updates: [{ q: filter, u: { $set: { explained: true } }, multi: true }],
            }
          : { delete: collection, deletes: [{ q: filter, limit: 0 }] };
  const explained: Document = await db.command({ explain, verbosity: 'queryPlanner' });
  const planner = explained.queryPlanner as { winningPlan?: Document } | undefined;
  const stages: string[] = [];
  const visit = (stage: unknown): void => {
    if (!stage || typeof stage !== 'object') return;
    const node = stage as Record<string, unknown>;
    if (typeof node.stage === 'string') stages.push(node.stage);
    for (const key of ['inputStage', 'queryPlan', 'winningPlan']) visit(node[key]);
    if (Array.isArray(node.inputStages)) node.inputStages.forEach(visit);
  };
  visit(planner?.winningPlan);
  if (
    stages.includes('COLLSCAN') ||
    stages.includes('SORT') ||
    !stages.some((stage) => MONGO_INDEX_STAGE.test(stage))
  ) {
    throw new Error(`${what}: not served by an index: ${stages.join(' > ') || 'no plan'}`);
  }
}

import type { Db, Document } from 'mongodb';
import pg from 'pg';
import {
  countByStatement,
  countStatement,
  type CountQuery,
  type GroupFields,
} from '../../tray-service/storage/mongodb/create-counter.ts';
import { detectStorage } from '../../tray-service/storage/mongodb/detect-storage.ts';
import { ferretTable, withPostgres } from '../../tray-service/storage/mongodb/ferret-postgres-tables.ts';
import { testStack } from './test-stack.ts';

export interface AssertIndexServedOptions {
  /** The command whose filter this is (default `find`). */
  command?: 'find' | 'count' | 'update' | 'delete';
  /** FerretDB's PostgreSQL database; default the test stack's. */
  postgresUrl?: string | undefined;
}

/** A PostgreSQL plan node (EXPLAIN FORMAT JSON), as FerretDB's explain returns it under queryPlanner.Plan. */
interface PgPlan {
  'Node Type'?: string;
  'Index Name'?: string;
  'Relation Name'?: string;
  Schema?: string;
  Alias?: string;
  Filter?: string;
  Plans?: PgPlan[];
}

const PG_INDEX_NODES = new Set(['Index Scan', 'Index Only Scan', 'Bitmap Index Scan']);
/** Winning-plan stages that read an index (EXPRESS_* and IDHACK: MongoDB's `_id` fast paths). */
const MONGO_INDEX_STAGE =
  /^(IXSCAN|COUNT_SCAN|DISTINCT_SCAN|IDHACK|EXPRESS_IXSCAN|EXPRESS_CLUSTERED_IXSCAN)$/;

/**
 * Fails unless the server answers this filter from an index. MongoDB: the winning plan has an
 * index scan and no COLLSCAN. FerretDB on PostgreSQL: the filter is pushed down
 * (`filterPushdown`), and PostgreSQL reads it through one of the GIN expression indexes
 * ensureCollections makes.
 */
export async function assertIndexServed(
  db: Db,
  collectionName: string,
  filter: Document,
  options: AssertIndexServedOptions = {},
): Promise<void> {
  const command = options.command ?? 'find';
  const storage = await detectStorage(db);
  const what = `${command} ${collectionName} ${JSON.stringify(filter)}`;
  if (storage === 'mongodb') return assertMongoServed(db, collectionName, filter, command, what);
  if (storage !== 'ferretdb-postgresql') throw new Error(`${what}: no index serves a filter on ${storage}`);
  // FerretDB 1.24 explains count, update and delete with the bare table and filterPushdown false
  // (measured, also for filters it does push down when it runs them): they build their query with
  // the same pushdown as find, so find's plan is the one to read.
  const explained: Document = await db.command({ explain: { find: collectionName, filter } });
  const plan = (explained.queryPlanner as { Plan?: PgPlan } | undefined)?.Plan;
  if (explained.filterPushdown !== true || !plan) {
    throw new Error(`${what}: not served by an index: FerretDB does not push this filter down to PostgreSQL`);
  }
  const nodes = walk(plan);
  const scanned = nodes.find((node) => node.Filter !== undefined && node['Relation Name'] !== undefined);
  const table = scanned ?? nodes.find((node) => node['Relation Name'] !== undefined);
  if (!table?.['Relation Name'] || !table.Schema) throw new Error(`${what}: no table in FerretDB's plan`);
  const postgresUrl = options.postgresUrl ?? testStack().postgresUrl;
  if (!postgresUrl)
    throw new Error(`${what}: FerretDB on PostgreSQL, but no PostgreSQL URL to read its indexes`);
  const ours = await ginIndexesOf(postgresUrl, table.Schema, table['Relation Name']);
  if (nodes.some((node) => isOurs(node, ours))) return;
  if (!scanned?.Filter) throw new Error(`${what}: not served by an index: ${summary(nodes)}`);
  // A sequential scan of a test-sized table is PostgreSQL's right choice and says nothing about
  // scale: ask for the plan again with sequential scans off, which uses an index only if one can
  // serve the pushed-down condition.
  const forced = await withPostgres(postgresUrl, async (client) => {
    await client.query('BEGIN');
    try {
      await client.query('SET LOCAL enable_seqscan = off');
      const relation = `${pg.escapeIdentifier(table.Schema!)}.${pg.escapeIdentifier(table['Relation Name']!)}`;
      const alias = pg.escapeIdentifier(scanned.Alias ?? table['Relation Name']!);
      const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PgPlan }[] }>(
        `EXPLAIN (FORMAT JSON) SELECT _jsonb FROM ${relation} AS ${alias} WHERE ${scanned.Filter}`,
      );
      return walk(rows[0]!['QUERY PLAN'][0]!.Plan);
    } finally {
      await client.query('ROLLBACK');
    }
  });
  if (!forced.some((node) => isOurs(node, ours))) {
    throw new Error(
      `${what}: not served by an index: PostgreSQL scans for ${scanned.Filter} (${summary(forced)}); GIN indexes: ${[...ours].join(', ') || 'none'}`,
    );
  }
}

/**
 * Fails unless PostgreSQL answers the counter's SQL for this count (createCounter, on FerretDB on
 * PostgreSQL; a countBy with `by`) through one of the GIN expression indexes; sequential scans are turned off first,
 * as above, so a test-sized table says something about scale.
 */
export async function assertCountServed(
  db: Db,
  collectionName: string,
  query: CountQuery,
  options: { postgresUrl?: string | undefined; by?: GroupFields } = {},
): Promise<void> {
  const what = `count${options.by ? ` by ${options.by.by}` : ''} ${collectionName} ${JSON.stringify(query)}`;
  const postgresUrl = options.postgresUrl ?? testStack().postgresUrl;
  if (!postgresUrl) throw new Error(`${what}: no PostgreSQL URL to read the plan from`);
  await withPostgres(postgresUrl, async (client) => {
    const table = await ferretTable(client, db.databaseName, collectionName);
    if (!table) throw new Error(`${what}: the collection has no table yet`);
    const ours = await ginIndexesOf(postgresUrl, db.databaseName, table);
    const { text, values } = options.by
      ? countByStatement(db.databaseName, table, query, options.by)
      : countStatement(db.databaseName, table, query);
    await client.query('BEGIN');
    try {
      await client.query('SET LOCAL enable_seqscan = off');
      const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PgPlan }[] }>(
        `EXPLAIN (FORMAT JSON) ${text}`,
        values,
      );
      const nodes = walk(rows[0]!['QUERY PLAN'][0]!.Plan);
      if (!nodes.some((node) => isOurs(node, ours)))
        throw new Error(`${what}: not served by an index: ${summary(nodes)}`);
    } finally {
      await client.query('ROLLBACK');
    }
  });
}

function walk(plan: PgPlan): PgPlan[] {
  return [plan, ...(plan.Plans ?? []).flatMap(walk)];
}

function isOurs(node: PgPlan, ours: ReadonlySet<string>): boolean {
  return PG_INDEX_NODES.has(node['Node Type'] ?? '') && ours.has(node['Index Name'] ?? '');
}

function summary(nodes: readonly PgPlan[]): string {
  return nodes
    .map((node) => [node['Node Type'], node['Index Name']].filter(Boolean).join(' on '))
    .join(' > ');
}

/** GIN (jsonb_path_ops) expression indexes of a FerretDB table: the ones ensureCollections makes. */
async function ginIndexesOf(postgresUrl: string, schema: string, table: string): Promise<Set<string>> {
  return withPostgres(postgresUrl, async (client) => {
    const { rows } = await client.query<{ indexname: string }>(
      "SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 AND indexdef LIKE '%USING gin%jsonb_path_ops%'",
      [schema, table],
    );
    return new Set(rows.map((row) => row.indexname));
  });
}

async function assertMongoServed(
  db: Db,
  collectionName: string,
  filter: Document,
  command: NonNullable<AssertIndexServedOptions['command']>,
  what: string,
): Promise<void> {
  const explain =
    command === 'find'
      ? { find: collectionName, filter }
      : command === 'count'
        ? { count: collectionName, query: filter }
        : command === 'update'
          ? {
              update: collectionName,
              updates: [{ q: filter, u: { $set: { explained: true } }, multi: true }],
            }
          : { delete: collectionName, deletes: [{ q: filter, limit: 0 }] };
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
  if (stages.includes('COLLSCAN') || !stages.some((stage) => MONGO_INDEX_STAGE.test(stage))) {
    throw new Error(`${what}: not served by an index: ${stages.join(' > ') || 'no plan'}`);
  }
}

import type { Db, Document, Filter } from 'mongodb';
import pg from 'pg';
import type { Storage } from './detect-storage.ts';
import { ferretTable } from './ferret-postgres-tables.ts';

/** A count whose conditions are top-level equalities, exclusions and lower bounds. */
export interface CountQuery {
  equal: Readonly<Record<string, string | number | boolean>>;
  /** Documents whose field holds none of these values. */
  notIn?: Readonly<Record<string, readonly string[]>>;
  /** Documents whose field is strictly greater (numbers, or dates). */
  above?: Readonly<Record<string, number | Date>>;
  /** Documents whose field is strictly smaller (numbers, or dates); not on a field `above` names. */
  below?: Readonly<Record<string, number | Date>>;
}

export interface Counter {
  count(collection: string, query: CountQuery): Promise<number>;
  close(): Promise<void>;
}

/** The same query as a MongoDB filter: what the driver sends, and the meaning the SQL must keep. */
export function countFilter(query: CountQuery): Filter<Document> {
  const filter: Record<string, unknown> = { ...query.equal };
  for (const [field, values] of Object.entries(query.notIn ?? {})) filter[field] = { $nin: [...values] };
  for (const [field, value] of Object.entries(query.above ?? {})) filter[field] = { $gt: value };
  for (const [field, value] of Object.entries(query.below ?? {})) filter[field] = { $lt: value };
  return filter;
}

/**
 * Counts documents. FerretDB 1.24 answers `count` by decoding every document its pushed-down
 * equality selects (a user with 1,000 records costs about as much as reading them all), so on
 * FerretDB on PostgreSQL the count runs in PostgreSQL itself, on the same GIN indexes, over the
 * JSON FerretDB stores (numbers and dates as JSON numbers; docs/storage.md). Elsewhere it is the
 * driver's countDocuments. A collection whose table is not there yet counts 0.
 */
export function createCounter(
  db: Db,
  options: { storage: Storage; postgresUrl?: string | undefined },
): Counter {
  if (options.storage !== 'ferretdb-postgresql' || !options.postgresUrl) {
    return {
      count: (collection, query) => db.collection(collection).countDocuments(countFilter(query)),
      close: async () => undefined,
    };
  }
  const pool = new pg.Pool({ connectionString: options.postgresUrl, max: 4 });
  // An idle connection dropped by the server is reported here; the next query opens another.
  pool.on('error', () => undefined);
  const tables = new Map<string, string>();
  const tableOf = async (collection: string, fresh: boolean) => {
    const known = fresh ? undefined : tables.get(collection);
    if (known !== undefined) return known;
    // Not remembered while missing: the first insert creates it.
    const table = await ferretTable(pool, db.databaseName, collection);
    if (table === undefined) tables.delete(collection);
    else tables.set(collection, table);
    return table;
  };
  const run = async (collection: string, query: CountQuery, fresh: boolean): Promise<number> => {
    const table = await tableOf(collection, fresh);
    if (table === undefined) return 0;
    const { text, values } = countStatement(db.databaseName, table, query);
    const { rows } = await pool.query<{ n: number }>(text, values);
    return rows[0]?.n ?? 0;
  };
  return {
    async count(collection, query) {
      try {
        return await run(collection, query, false);
      } catch (error) {
        // 42P01: the table was replaced (collection dropped and created again): look it up anew.
        if ((error as { code?: string }).code !== '42P01') throw error;
        return run(collection, query, true);
      }
    },
    close: () => pool.end(),
  };
}

/**
 * The SQL of a count over FerretDB's table `table` in schema `schema` (the database's name):
 * equalities as `@>` on the GIN expression indexes ensureCollections makes, the rest as filters
 * on the rows those select. Pure; exported so tests can read its plan.
 */
export function countStatement(
  schema: string,
  table: string,
  query: CountQuery,
): { text: string; values: unknown[] } {
  const args: unknown[] = [];
  const arg = (value: unknown) => {
    args.push(value);
    return `$${args.length}`;
  };
  const where = [
    ...Object.entries(query.equal).map(
      ([field, value]) => `_jsonb->${arg(field)} @> ${arg(JSON.stringify(value))}::jsonb`,
    ),
    ...Object.entries(query.notIn ?? {}).flatMap(([field, values]) =>
      values.map(
        // COALESCE: a document without the field holds none of the values, as with $nin.
        (value) => `COALESCE(NOT (_jsonb->${arg(field)} @> ${arg(JSON.stringify(value))}::jsonb), true)`,
      ),
    ),
    ...Object.entries(query.below ?? {}).map(
      ([field, value]) =>
        `(_jsonb->>${arg(field)})::numeric < ${arg(value instanceof Date ? value.getTime() : value)}`,
    ),
    ...Object.entries(query.above ?? {}).map(
      ([field, value]) =>
        `(_jsonb->>${arg(field)})::numeric > ${arg(value instanceof Date ? value.getTime() : value)}`,
    ),
  ];
  const text = `SELECT count(*)::int AS n FROM ${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(table)}${
    where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''
  }`;
  return { text, values: args };
}

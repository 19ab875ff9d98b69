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

/** The documents holding one value of the grouped field. */
export interface GroupCount {
  /** The field's value (documents without it, or with a non-string value, are left out). */
  key: string;
  count: number;
  /** The largest value of the `newest` field among them (a number field). */
  newest: number;
}

/** The field a countBy groups by, and the number field whose largest value it reports per group. */
export interface GroupFields {
  by: string;
  newest: string;
}

export interface Counter {
  count(collection: string, query: CountQuery): Promise<number>;
  /** The query's documents counted per value of `fields.by`, newest first (by `fields.newest`). */
  countBy(collection: string, query: CountQuery, fields: GroupFields): Promise<GroupCount[]>;
  close(): Promise<void>;
}

const newestFirst = (a: GroupCount, b: GroupCount) => b.newest - a.newest;

/** The same query as a MongoDB filter: what the driver sends, and the meaning the SQL must keep. */
export function countFilter(query: CountQuery): Filter<Document> {
  const filter: Record<string, unknown> = { ...query.equal };
  for (const [field, values] of Object.entries(query.notIn ?? {})) filter[field] = { $nin: [...values] };
  for (const [field, value] of Object.entries(query.above ?? {})) filter[field] = { $gt: value };
  for (const [field, value] of Object.entries(query.below ?? {})) filter[field] = { $lt: value };
  return filter;
}

/** The documents' groups by `fields.by`, newest first; documents without a string key or a number are left out. Pure. */
export function groupCounts(docs: readonly Document[], fields: GroupFields): GroupCount[] {
  const groups = new Map<string, GroupCount>();
  for (const doc of docs) {
    const key: unknown = doc[fields.by];
    const at: unknown = doc[fields.newest];
    if (typeof key !== 'string' || typeof at !== 'number') continue;
    const group = groups.get(key);
    if (group) {
      group.count += 1;
      group.newest = Math.max(group.newest, at);
    } else groups.set(key, { key, count: 1, newest: at });
  }
  return [...groups.values()].sort(newestFirst);
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
      // FerretDB implements only $sum and $count in $group, so the groups are made here from the
      // two fields of the documents the query selects (an index serves it on MongoDB).
      countBy: async (collection, query, fields) =>
        groupCounts(
          await db
            .collection(collection)
            .find(countFilter(query), { projection: { _id: 0, [fields.by]: 1, [fields.newest]: 1 } })
            .toArray(),
          fields,
        ),
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
  /** Runs a statement on `collection`'s table; `empty` when the table is not there. */
  const run = async <T>(
    collection: string,
    statement: (table: string) => { text: string; values: unknown[] },
    read: (rows: Record<string, unknown>[]) => T,
    empty: T,
  ): Promise<T> => {
    const attempt = async (fresh: boolean) => {
      const table = await tableOf(collection, fresh);
      if (table === undefined) return empty;
      const { text, values } = statement(table);
      return read((await pool.query<Record<string, unknown>>(text, values)).rows);
    };
    try {
      return await attempt(false);
    } catch (error) {
      // 42P01: the table was replaced (collection dropped and created again): look it up anew.
      if ((error as { code?: string }).code !== '42P01') throw error;
      return attempt(true);
    }
  };
  return {
    count: (collection, query) =>
      run(
        collection,
        (table) => countStatement(db.databaseName, table, query),
        (rows) => Number(rows[0]?.n ?? 0),
        0,
      ),
    countBy: (collection, query, fields) =>
      run(
        collection,
        (table) => countByStatement(db.databaseName, table, query, fields),
        (rows) =>
          rows
            .filter((row) => typeof row.key === 'string' && typeof row.newest === 'number')
            .map((row) => ({ key: row.key as string, count: Number(row.n), newest: row.newest as number })),
        [],
      ),
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
  const where = whereClause(query, argumentList(args));
  return { text: `SELECT count(*)::int AS n FROM ${tableName(schema, table)}${where}`, values: args };
}

/**
 * The SQL of a countBy, like countStatement's: one row per value of `fields.by` (as text), with
 * its count and the largest `fields.newest`, newest first. Pure; exported so tests can read its plan.
 */
export function countByStatement(
  schema: string,
  table: string,
  query: CountQuery,
  fields: GroupFields,
): { text: string; values: unknown[] } {
  const args: unknown[] = [];
  const arg = argumentList(args);
  const key = `_jsonb->>${arg(fields.by)}`;
  const newest = `max((_jsonb->>${arg(fields.newest)})::numeric)::float8`;
  const where = whereClause(query, arg);
  return {
    text: `SELECT ${key} AS key, count(*)::int AS n, ${newest} AS newest FROM ${tableName(schema, table)}${where} GROUP BY 1 ORDER BY 3 DESC`,
    values: args,
  };
}

const tableName = (schema: string, table: string) =>
  `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(table)}`;

/** Adds a value to `args` and returns its placeholder. */
const argumentList =
  (args: unknown[]) =>
  (value: unknown): string => {
    args.push(value);
    return `$${args.length}`;
  };

function whereClause(query: CountQuery, arg: (value: unknown) => string): string {
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
  return where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '';
}

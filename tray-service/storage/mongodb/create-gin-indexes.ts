import { createHash } from 'node:crypto';
import pg from 'pg';

/** PostgreSQL's identifier limit (NAMEDATALEN - 1); a longer name would be silently truncated. */
const MAX_IDENTIFIER = 63;
/** duplicate_table, duplicate_object, unique_violation (on pg_class): another process created it first. */
const CREATED_CONCURRENTLY = new Set(['42P07', '42710', '23505']);

/**
 * Deterministic, so every process (and every restart) names the same index the same way and
 * `IF NOT EXISTS` finds it. The table name is part of it: a collection dropped and created again
 * gets a new table, and its indexes new names.
 */
export function ginIndexName(table: string, field: string): string {
  const plain = `${table}_${field}_eq_gin`;
  if (plain.length <= MAX_IDENTIFIER && /^[A-Za-z0-9_]+$/.test(field)) return plain;
  const digest = createHash('sha256').update(field).digest('hex').slice(0, 10);
  return `${table.slice(0, MAX_IDENTIFIER - digest.length - 9)}_${digest}_eq_gin`;
}

/**
 * GIN (jsonb_path_ops) expression indexes on `_jsonb->'<field>'`: the only index PostgreSQL can use
 * for the filter FerretDB pushes down for a top-level equality, `_jsonb->'<field>' @> '<value>'`
 * (its own createIndexes builds btree indexes on the same expression, which `@>` never uses).
 * Idempotent; safe when two processes run it at once. Returns the names of the indexes in force.
 */
export async function createGinIndexes(
  client: pg.Client,
  schema: string,
  table: string,
  fields: readonly string[],
): Promise<string[]> {
  const names: string[] = [];
  for (const field of fields) {
    const name = ginIndexName(table, field);
    try {
      // Not CONCURRENTLY: that cannot run beside a twin creating the same index (one is left
      // invalid). Building blocks writes to the table for as long as it takes, once.
      await client.query(
        `CREATE INDEX IF NOT EXISTS ${pg.escapeIdentifier(name)} ON ${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(table)} USING gin ((_jsonb->${pg.escapeLiteral(field)}) jsonb_path_ops)`,
      );
    } catch (error) {
      if (!CREATED_CONCURRENTLY.has(String((error as { code?: unknown }).code))) throw error;
    }
    names.push(name);
  }
  return names;
}

import pg from 'pg';

/**
 * FerretDB 1.24 on PostgreSQL keeps each database in a schema of that name and each collection in
 * a table whose name it records in `<db>._ferretdb_database_metadata` (`_jsonb->>'table'` of the
 * row whose `_id` is the collection's name). The table exists from the first insert or
 * createCollection, and is replaced when the collection is dropped and created again.
 */
export const FERRET_METADATA_TABLE = '_ferretdb_database_metadata';

/** A short-lived connection: the seam runs at start-up and after a collection is created, rarely. */
export async function withPostgres<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  // A dropped connection is reported by the query that used it; unhandled, it would end the process.
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function ferretSchemaExists(url: string, dbName: string): Promise<boolean> {
  return withPostgres(url, async (client) => {
    const qualified = `${pg.escapeIdentifier(dbName)}.${pg.escapeIdentifier(FERRET_METADATA_TABLE)}`;
    const { rows } = await client.query<{ found: string | null }>('SELECT to_regclass($1)::text AS found', [
      qualified,
    ]);
    return rows[0]?.found != null;
  });
}

/** The table of a collection, or undefined when FerretDB has not created it (or the schema is not here). */
export async function ferretTable(
  client: Pick<pg.Pool, 'query'>,
  dbName: string,
  collection: string,
): Promise<string | undefined> {
  const metadata = `${pg.escapeIdentifier(dbName)}.${pg.escapeIdentifier(FERRET_METADATA_TABLE)}`;
  const { rows: exists } = await client.query<{ found: string | null }>(
    'SELECT to_regclass($1)::text AS found',
    [metadata],
  );
  if (exists[0]?.found == null) return undefined;
  const { rows } = await client.query<{ table: string }>(
    `SELECT _jsonb->>'table' AS table FROM ${metadata} WHERE _jsonb->>'_id' = $1`,
    [collection],
  );
  return rows[0]?.table;
}

import type { Db } from 'mongodb';

/**
 * Whether the server is FerretDB, which names itself in buildInfo (`ferretdbVersion`). Its quirks
 * (no TTL indexes, a PostgreSQL pool one update takes from twice) are handled where they bite.
 */
export async function isFerretDb(db: Db): Promise<boolean> {
  const info = await db.admin().command({ buildInfo: 1 });
  return typeof info.ferretdbVersion === 'string';
}

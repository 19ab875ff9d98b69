import type pg from 'pg';
import { migrate, readMigrations } from '../../../../../tray-service/storage/postgres/migrate.ts';

/** An empty schema migrated up to, not including, `version`: a database from before that migration. */
export async function schemaBefore(pool: pg.Pool, version: number): Promise<void> {
  await pool.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
  await migrate(
    pool,
    readMigrations().filter((migration) => migration.version < version),
  );
}

import { connectPostgres } from '../../tray-service/storage/postgres/connect-postgres.ts';
import { migrate } from '../../tray-service/storage/postgres/migrate.ts';
import { createPostgresBans } from '../../tray-service/storage/postgres/postgres-bans.ts';
import { createPostgresBlockList } from '../../tray-service/storage/postgres/postgres-block-list.ts';
import { createPostgresDecisions } from '../../tray-service/storage/postgres/postgres-decisions.ts';
import { createPostgresEvents } from '../../tray-service/storage/postgres/postgres-events.ts';
import { createPostgresLatestTimes } from '../../tray-service/storage/postgres/postgres-latest-times.ts';
import { createPostgresMembersImport } from '../../tray-service/storage/postgres/postgres-members-import.ts';
import { createPostgresRecords } from '../../tray-service/storage/postgres/postgres-records.ts';
import { createPostgresWrites } from '../../tray-service/storage/postgres/postgres-writes.ts';
import { purgeExpiredEvents } from '../../tray-service/storage/postgres/purge-expired-events.ts';
import { purgeExpiredRecords } from '../../tray-service/storage/postgres/purge-expired-records.ts';
import type { TrayStorage } from '../../tray-service/storage/port.ts';

/**
 * The PostgreSQL adapter's parts assembled as its opener does (pool, migrations, every port), for
 * the tests until the adapter's own opener is in the tree.
 */
export async function openInterimPostgresStorage(url: string): Promise<TrayStorage> {
  const pool = connectPostgres(url, { poolSize: 4, statementTimeoutMs: 30_000, applicationName: 'tests' });
  await migrate(pool);
  return {
    engine: 'postgres',
    records: createPostgresRecords(pool),
    writes: createPostgresWrites(pool),
    lastRead: createPostgresLatestTimes(pool, 'tray_last_read'),
    clears: createPostgresLatestTimes(pool, 'tray_clears'),
    blockList: createPostgresBlockList(pool),
    bans: createPostgresBans(pool),
    events: createPostgresEvents(pool),
    decisions: createPostgresDecisions(pool),
    members: createPostgresMembersImport(pool),
    purgeExpired: async (now) => ({
      records: await purgeExpiredRecords(pool, now),
      events: await purgeExpiredEvents(pool, now),
    }),
    ping: async () => {
      await pool.query('SELECT 1');
    },
    close: () => pool.end(),
  };
}

import type { TrayStorage } from '../port.ts';
import { PurgeError } from '../purge-error.ts';
import { awaitFirstAnswer } from './await-first-answer.ts';
import { connectPostgres, type PostgresOptions } from './connect-postgres.ts';
import { migrate, requireMigrated, type MigrationEvent } from './migrate.ts';
import { createPostgresBans } from './postgres-bans.ts';
import { createPostgresDeletedUsers } from './postgres-deleted-users.ts';
import { createPostgresBlockList } from './postgres-block-list.ts';
import { createPostgresCommunityMembers } from './postgres-community-members.ts';
import { createPostgresDecisions } from './postgres-decisions.ts';
import { createPostgresEvents } from './postgres-events.ts';
import { createPostgresInbox } from './postgres-inbox.ts';
import { createPostgresLatestTimes } from './postgres-latest-times.ts';
import { createPostgresMembersImport } from './postgres-members-import.ts';
import { createPostgresRecords } from './postgres-records.ts';
import { createPostgresRemovalOutcomes } from './postgres-removal-outcomes.ts';
import { createPostgresWrites } from './postgres-writes.ts';
import { purgeExpiredEvents } from './purge-expired-events.ts';
import { purgeExpiredRecords } from './purge-expired-records.ts';
import { pingWritable } from './read-only-connection.ts';

/** Longest a ping waits for its answer (the gate's and /readyz's own budgets are shorter or alike). */
const PING_TIMEOUT_MS = 5_000;

/**
 * The PostgreSQL adapter of the storage port: a pool on the URL's database, the schema brought up
 * to date (every instance may start at once: migrate.ts serialises them), and each part of the
 * port on that pool. A failing migration ends the pool and stops start-up. A server that does not
 * answer within FIRST_ANSWER_MS fails the open before the migrations, which are not bounded.
 */
export async function openPostgresStorage(
  url: string,
  options: PostgresOptions & {
    /** TRAY_FANOUT_BATCH: members one statement of a community post's fan-out writes at most. */
    fanOutBatch?: number;
    /** Never migrates; refuses a schema older than this version's (OpenStorageOptions.readOnly). */
    readOnly?: boolean;
    /** Told each migration's start, end and lock waits (start-up logs them). */
    onMigration?: (event: MigrationEvent) => void;
  },
): Promise<TrayStorage> {
  await awaitFirstAnswer(url, options.applicationName);
  const pool = connectPostgres(url, options);
  try {
    await (options.readOnly
      ? requireMigrated(pool)
      : migrate(pool, undefined, options.onMigration ? { onEvent: options.onMigration } : {}));
  } catch (error) {
    await pool.end();
    throw error;
  }
  // The ping's own connection: the worker's gate tells an outage from a job's failure by it and
  // /readyz asks it, and behind busy jobs in the pool it would wait and read as an outage. A ping
  // that finds no answer within PING_TIMEOUT_MS fails (no pile-up while the server hangs).
  const pingPool = connectPostgres(url, {
    ...options,
    poolSize: 1,
    answerWithinMs: PING_TIMEOUT_MS,
  });
  let closing: Promise<void> | undefined;
  return {
    engine: 'postgres',
    records: createPostgresRecords(pool),
    writes: createPostgresWrites(
      pool,
      options.fanOutBatch === undefined ? {} : { membersPerFanOutStatement: options.fanOutBatch },
    ),
    lastRead: createPostgresLatestTimes(pool, 'tray_last_read'),
    clears: createPostgresLatestTimes(pool, 'tray_clears'),
    blockList: createPostgresBlockList(pool),
    deletedUsers: createPostgresDeletedUsers(pool),
    bans: createPostgresBans(pool),
    events: createPostgresEvents(pool),
    decisions: createPostgresDecisions(pool),
    members: createPostgresMembersImport(pool),
    communityMembers: createPostgresCommunityMembers(pool),
    inbox: createPostgresInbox(pool),
    removalOutcomes: createPostgresRemovalOutcomes(pool),
    async purgeExpired(now) {
      // Every table is purged past those that fail; they are reported together at the end.
      const records = await purgeExpiredRecords(pool, now);
      const events = await purgeExpiredEvents(pool, now);
      const purged = { records: records.purged, events: events.purged };
      const failures = [...records.failures, ...events.failures];
      if (failures.length > 0) throw new PurgeError(failures, purged);
      return purged;
    },
    ping: () => pingWritable(pingPool),
    // Ending a pool twice throws; closing the storage twice (two shutdown paths) must not.
    close: () => (closing ??= Promise.all([pool.end(), pingPool.end()]).then(() => undefined)),
  };
}

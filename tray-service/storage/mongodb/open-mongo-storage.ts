import { connectMongo, pingMongo } from '../../../shared/mongo/connect-mongo.ts';
import type { Logger } from '../../../shared/logging/create-logger.ts';
import type { TrayStorage } from '../port.ts';
import { createMongoBlockList } from './block-list/mongo-block-list.ts';
import { createMongoDeletedUsers } from './grouping/deleted-users.ts';
import type { Db } from 'mongodb';
import { TRAY_CLEARS, TRAY_MIGRATIONS, TRAY_READ_STATE } from './collections/collection-names.ts';
import { SchemaBehindError } from '../schema-behind-error.ts';
import { ensureCollections } from './setup/ensure-collections.ts';
import { createMongoLatestTimes } from './records/mongo-latest-times.ts';
import { migrateRecordShape, RECORD_SHAPE } from './records/migrate-record-shape.ts';
import { INBOX_STATE, migrateInboxState } from './records/migrate-inbox-state.ts';
import { DECISION_EXPIRY, migrateDecisionExpiry } from './moderation/migrate-decision-expiry.ts';
import { DELETED_MARK, migrateDeletedMark } from './grouping/migrate-deleted-mark.ts';
import { migrateMembershipProcessedAt, PROCESSED_AT } from './memberships/migrate-processed-at.ts';
import { EVENTS_CONSOLE, migrateEventsConsole } from './events/migrate-events-console.ts';
import { EVERY_ACTION_KEPT, everyActionKeptSince } from './removals/kept-since.ts';
import { createMongoRemovalOutcomes } from './removals/removal-outcomes.ts';
import { createMongoBans } from './moderation/mongo-bans.ts';
import { createMongoCommunityMembers } from './grouping/mongo-community-members.ts';
import { createMongoDecisions } from './moderation/mongo-decisions.ts';
import { createMongoEvents } from './events/mongo-events.ts';
import { createMongoMembersImport } from './memberships/mongo-members-import.ts';
import { createMongoRecords } from './records/mongo-records.ts';
import { createMongoInbox } from './inbox/mongo-inbox.ts';
import { createMongoWrites } from './writes/mongo-writes.ts';
import { purgeExpired } from './purge-expired.ts';
import { trayCollections } from './collections/tray-collections.ts';

export interface MongoStorageOptions {
  appName: string;
  logger: Logger;
  /** Recipients per compare-and-set round of a fan-out (TRAY_FANOUT_BATCH); 10,000 by default. */
  fanOutBatch?: number;
  /** TRAY_RETENTION_DAYS, for records brought from an older shape at open; 90 by default. */
  retentionDays?: number;
  /** Sets nothing up; refuses a database an older version left (OpenStorageOptions.readOnly). */
  readOnly?: boolean;
}

/**
 * The one-time upgrade passes of this version, in the order they run at open, each recorded in
 * TRAY_MIGRATIONS under its name once done (runOnce).
 */
const UPGRADES: readonly (readonly [
  name: string,
  run: (db: Db, retentionDays: number) => Promise<number>,
])[] = [
  [RECORD_SHAPE, (db, retentionDays) => migrateRecordShape(db, { retentionDays })],
  [INBOX_STATE, (db) => migrateInboxState(db)],
  [DECISION_EXPIRY, (db) => migrateDecisionExpiry(db)],
  [DELETED_MARK, (db) => migrateDeletedMark(db)],
  [EVENTS_CONSOLE, (db) => migrateEventsConsole(db)],
  [PROCESSED_AT, (db) => migrateMembershipProcessedAt(db)],
];

/**
 * For a read-only open: throws SchemaBehindError unless every upgrade pass of this version has
 * run on the database and its first open noted since when every action is kept (TRAY_MIGRATIONS);
 * an older version's data may lack what this version's reads look for. Returns that time.
 */
async function requireUpgraded(db: Db): Promise<number> {
  const wanted = [...UPGRADES.map(([name]) => name), EVERY_ACTION_KEPT];
  const done = await db
    .collection<{ _id: string; at: Date }>(TRAY_MIGRATIONS)
    .find({ _id: { $in: wanted } })
    .toArray();
  const missing = wanted.filter((name) => !done.some((doc) => doc._id === name));
  if (missing.length === wanted.length)
    throw new SchemaBehindError('not there (the tray service never opened this database)', 'its set-up');
  if (missing.length > 0) throw new SchemaBehindError(`without the upgrades ${missing.join(', ')}`, 'them');
  return done.find((doc) => doc._id === EVERY_ACTION_KEPT)?.at.getTime() ?? 0;
}

/**
 * The MongoDB adapter of the storage port (MongoDB 6+, tested on FerretDB 1.24): connects, makes
 * sure every collection has the indexes its queries need, brings records and moderation decisions
 * of an older shape to the current one (once per database), and assembles each part of the port.
 */
export async function openMongoStorage(
  uri: string,
  dbName: string,
  options: MongoStorageOptions,
): Promise<TrayStorage> {
  const connection = await connectMongo(uri, dbName, { appName: options.appName, logger: options.logger });
  // The ping (readiness, the worker's storage gate) on a client of its own: behind calls that hold
  // the whole pool (a busy worker) it would wait for a connection and read as an outage. Two
  // connections: readiness and the gate may ask at once. Each ping is bounded, so one that lost its
  // answer (a server going down mid-command) frees its connection for the next.
  const probe = await connectMongo(uri, dbName, {
    appName: `${options.appName}-probe`,
    logger: options.logger,
    pool: { maxPoolSize: 2, socketTimeoutMS: 5_000, waitQueueTimeoutMS: 2_000 },
  }).catch(async (error: unknown) => {
    await connection.close();
    throw error;
  });
  try {
    const { db } = connection;
    let keptSince: number;
    if (options.readOnly) keptSince = await requireUpgraded(db);
    else {
      await ensureCollections(db, trayCollections, { logger: options.logger });
      for (const [, run] of UPGRADES) await run(db, options.retentionDays ?? 90);
      keptSince = await everyActionKeptSince(db);
    }
    const lastRead = createMongoLatestTimes(db, TRAY_READ_STATE, 'lastReadAt');
    return {
      engine: 'mongodb',
      records: createMongoRecords(db, { lastRead }),
      writes: createMongoWrites(db, { fanOutBatch: options.fanOutBatch ?? 10_000, keptSince }),
      lastRead,
      clears: createMongoLatestTimes(db, TRAY_CLEARS, 'clearedAt'),
      blockList: createMongoBlockList(db),
      deletedUsers: createMongoDeletedUsers(db),
      bans: createMongoBans(db),
      events: createMongoEvents(db),
      decisions: createMongoDecisions(db),
      members: createMongoMembersImport(db),
      communityMembers: createMongoCommunityMembers(db),
      inbox: createMongoInbox(db),
      removalOutcomes: createMongoRemovalOutcomes(db),
      purgeExpired: (now) => purgeExpired(db, now),
      ping: () => pingMongo(probe.db),
      close: async () => {
        await Promise.all([connection.close(), probe.close()]);
      },
    };
  } catch (error) {
    await Promise.all([connection.close(), probe.close()]);
    throw error;
  }
}

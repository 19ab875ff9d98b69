import { connectMongo, pingMongo } from '../../../shared/mongo/connect-mongo.ts';
import type { Logger } from '../../../shared/logging/create-logger.ts';
import type { TrayStorage } from '../port.ts';
import { createMongoBlockList } from './block-list/mongo-block-list.ts';
import { createMongoDeletedUsers } from './grouping/deleted-users.ts';
import { TRAY_CLEARS, TRAY_READ_STATE } from './collection-names.ts';
import { ensureCollections } from './setup/ensure-collections.ts';
import { createMongoLatestTimes } from './records/mongo-latest-times.ts';
import { migrateRecordShape } from './records/migrate-record-shape.ts';
import { migrateInboxState } from './records/migrate-inbox-state.ts';
import { migrateDecisionExpiry } from './moderation/migrate-decision-expiry.ts';
import { migrateDeletedMark } from './grouping/migrate-deleted-mark.ts';
import { migrateMembershipProcessedAt } from './memberships/migrate-processed-at.ts';
import { migrateEventsConsole } from './events/migrate-events-console.ts';
import { everyActionKeptSince } from './removals/kept-since.ts';
import { createMongoRemovalOutcomes } from './removals/removal-outcomes.ts';
import { createMongoBans } from './moderation/mongo-bans.ts';
import { createMongoCommunityMembers } from './memberships/mongo-community-members.ts';
import { createMongoDecisions } from './moderation/mongo-decisions.ts';
import { createMongoEvents } from './events/mongo-events.ts';
import { createMongoMembersImport } from './memberships/mongo-members-import.ts';
import { createMongoRecords } from './records/mongo-records.ts';
import { createMongoInbox } from './inbox/mongo-inbox.ts';
import { createMongoWrites } from './grouping/mongo-writes.ts';
import { purgeExpired } from './purge-expired.ts';
import { trayCollections } from './tray-collections.ts';

export interface MongoStorageOptions {
  appName: string;
  logger: Logger;
  /** Recipients per compare-and-set round of a fan-out (TRAY_FANOUT_BATCH); 10,000 by default. */
  fanOutBatch?: number;
  /** TRAY_RETENTION_DAYS, for records brought from an older shape at open; 90 by default. */
  retentionDays?: number;
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
    await ensureCollections(db, trayCollections, { logger: options.logger });
    await migrateRecordShape(db, { retentionDays: options.retentionDays ?? 90 });
    await migrateInboxState(db);
    await migrateDecisionExpiry(db);
    await migrateDeletedMark(db);
    await migrateEventsConsole(db);
    await migrateMembershipProcessedAt(db);
    const keptSince = await everyActionKeptSince(db);
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

import type { Db, IndexSpecification } from 'mongodb';
import { EVENTS, MEMBERSHIPS, TRAY_RECORD_CLAIMS, TRAY_RECORDS } from '../../shared/tray/tray-record.ts';

export interface WorkerIndexes {
  /** Whether the server accepted TTL indexes (MongoDB does; FerretDB 1.24 does not). */
  ttl: boolean;
}

/**
 * Indexes of the worker's own queries, created at start-up (idempotent). The API creates the
 * indexes of its reads (history by user and lastUpdate, ...).
 */
export async function ensureWorkerIndexes(db: Db): Promise<WorkerIndexes> {
  const records = db.collection(TRAY_RECORDS);
  const members = db.collection(MEMBERSHIPS);
  // Post fan-out: find({communityId, active: true, since <= createdAt}) in postRecipients.
  await members.createIndex({ communityId: 1, active: 1, since: 1 }, { name: 'fanout' });
  // Deleted user: updateMany({userId: {$in}}) in endMemberships.
  await members.createIndex({ userId: 1 }, { name: 'member_user' });
  // Deleted user: find({'actors.userId': {$in}}) rewriting their snapshots to "Deleted user".
  await records.createIndex({ 'actors.userId': 1 }, { name: 'actor_user' });
  // Deleted user: deleteMany({userId: {$in}}) removing their own tray.
  await records.createIndex({ userId: 1 }, { name: 'record_user' });
  // Retention: deleteMany({expiresAt <= now}) in purgeExpired, and the server's own TTL deletes.
  const ttlRecords = await expiryIndex(db, TRAY_RECORDS);
  const ttlEvents = await expiryIndex(db, EVENTS);
  // Write claims: deleteMany({expiresAt <= now}) in purgeExpired.
  await expiryIndex(db, TRAY_RECORD_CLAIMS);
  return { ttl: ttlRecords && ttlEvents };
}

/** A TTL index where the server accepts one, else a plain index for the periodic purge. */
async function expiryIndex(db: Db, collection: string): Promise<boolean> {
  const key: IndexSpecification = { expiresAt: 1 };
  try {
    await db.collection(collection).createIndex(key, { name: 'expiry', expireAfterSeconds: 0 });
    return true;
  } catch (error) {
    if (!/expireAfterSeconds/i.test(String((error as Error).message))) throw error;
    await db.collection(collection).createIndex(key, { name: 'expiry' });
    return false;
  }
}

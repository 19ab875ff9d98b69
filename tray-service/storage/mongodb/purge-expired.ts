import type { Db } from 'mongodb';
import {
  EVENT_LAG_MINUTES,
  EVENT_MINUTES,
  TRAY_TARGET_ACTIONS,
  EVENTS,
  TRAY_RECORD_CLAIMS,
  TRAY_RECORDS,
  TRAY_TARGET_ACTORS,
  TRAY_MUTES,
  TRAY_MUTE_LOCKS,
  TRAY_REMOVALS,
  TRAY_REMOVAL_WORK,
  TRAY_REMOVAL_OUTCOMES,
  TRAY_REMOVAL_CHANGES,
} from './collection-names.ts';

/**
 * Deletes expired records (90 days after lastUpdate by default), events and their per-minute
 * rollups, group actors, kept actions, write claims, ended mute spans and stale mute locks, removals' tombstones, work notes and outcomes: every document whose `expiresAt` has passed, through the same `expiresAt` index as the
 * TTL deletes. On MongoDB the TTL monitor deletes them anyway, once a minute; this is the port's
 * purge on demand, and the only expiry on a server that refuses TTL indexes (FerretDB). Readers
 * filter `expiresAt > now` too, so an expired record is never returned meanwhile.
 */
export async function purgeExpired(db: Db, now = new Date()): Promise<{ records: number; events: number }> {
  const expired = { expiresAt: { $lte: now } };
  const records = (await db.collection(TRAY_RECORDS).deleteMany(expired)).deletedCount;
  const events = (await db.collection(EVENTS).deleteMany(expired)).deletedCount;
  await db.collection(TRAY_TARGET_ACTORS).deleteMany(expired);
  await db.collection(TRAY_TARGET_ACTIONS).deleteMany(expired);
  await db.collection(TRAY_RECORD_CLAIMS).deleteMany(expired);
  await db.collection(TRAY_MUTES).deleteMany(expired);
  await db.collection(TRAY_MUTE_LOCKS).deleteMany(expired);
  await db.collection(TRAY_REMOVALS).deleteMany(expired);
  await db.collection(TRAY_REMOVAL_WORK).deleteMany(expired);
  await db.collection(TRAY_REMOVAL_OUTCOMES).deleteMany(expired);
  await db.collection(TRAY_REMOVAL_CHANGES).deleteMany(expired);
  await db.collection(EVENT_MINUTES).deleteMany(expired);
  await db.collection(EVENT_LAG_MINUTES).deleteMany(expired);
  return { records, events };
}

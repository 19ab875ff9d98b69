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
  TRAY_WRITE_LOCKS,
  TRAY_REMOVALS,
  TRAY_REMOVAL_WORK,
  TRAY_REMOVAL_OUTCOMES,
  TRAY_REMOVAL_CHANGES,
  MODERATION_DECISIONS,
  MEMBERSHIP_CHANGES,
} from './collections/collection-names.ts';
import { purgeEach } from '../purge-each.ts';
import { purgeExpiredDecisions } from './moderation/purge-expired-decisions.ts';
import { PurgeError } from '../purge-error.ts';
import { purgeKeptActions } from './grouping/purge-kept-actions.ts';
import { purgeEndedMutes } from './mutes/purge-ended-mutes.ts';
import { giveChangesProcessedAt } from './memberships/migrate-processed-at.ts';
import { purgeKeptTombstones } from './removals/purge-kept-tombstones.ts';

/**
 * Deletes expired records (90 days after lastUpdate by default), events and their per-minute
 * rollups and moderation decisions, write claims, stale mute locks, removals' work notes and
 * outcomes: every document whose `expiresAt` has passed, through the
 * same `expiresAt` index as the TTL deletes. On MongoDB the TTL monitor deletes them anyway, once a
 * minute; this is the port's purge on demand, and the only expiry on a server that refuses TTL
 * indexes (FerretDB). Readers filter `expiresAt > now` too, so an expired record is never returned
 * meanwhile. Group actors, kept actions, mute spans and tombstones have no TTL index: they go here,
 * once no record built from or judged by them can live any more (purge-kept-actions.ts,
 * purge-ended-mutes.ts, purge-kept-tombstones.ts).
 */
export async function purgeExpired(db: Db, now = new Date()): Promise<{ records: number; events: number }> {
  const expired = { expiresAt: { $lte: now } };
  const step = (collection: string) => ({
    table: collection,
    purge: async () => (await db.collection(collection).deleteMany(expired)).deletedCount,
  });
  // Each collection on its own (purgeEach): one that fails never keeps the others' expired documents.
  const records = await purgeEach(
    [
      step(TRAY_RECORDS),
      // Kept while a record built from them can live, not at their own expiry. Actors first: a
      // group that is over loses them, and its kept actions then find none.
      ...[TRAY_TARGET_ACTORS, TRAY_TARGET_ACTIONS].map((collection) => ({
        table: collection,
        purge: () => purgeKeptActions(db, collection, now),
      })),
      // Kept while a record they judge lives, or could take what they void, after those went.
      { table: TRAY_MUTES, purge: () => purgeEndedMutes(db, now) },
      // Deletes nothing: gives the changes an older worker stored in a rolling upgrade their
      // processing time, without which they would never be pruned (migrate-processed-at.ts).
      {
        table: MEMBERSHIP_CHANGES,
        purge: async () => {
          await giveChangesProcessedAt(db, now.getTime());
          return 0;
        },
      },
      // After the kept actions, whose expiry their step moves out to their group's: after that
      // failed, a tombstone could go while its group still lives.
      {
        table: TRAY_REMOVALS,
        needs: [TRAY_TARGET_ACTORS, TRAY_TARGET_ACTIONS],
        purge: () => purgeKeptTombstones(db, now),
      },
      ...[
        TRAY_RECORD_CLAIMS,
        TRAY_WRITE_LOCKS,
        TRAY_REMOVAL_WORK,
        TRAY_REMOVAL_OUTCOMES,
        TRAY_REMOVAL_CHANGES,
      ].map(step),
    ],
    TRAY_RECORDS,
  );
  // The events' moderation decisions expire with them, but in batches and never while pending
  // delivery (purge-expired-decisions.ts).
  const events = await purgeEach(
    [
      step(EVENTS),
      { table: MODERATION_DECISIONS, purge: () => purgeExpiredDecisions(db, now) },
      step(EVENT_MINUTES),
      step(EVENT_LAG_MINUTES),
    ],
    EVENTS,
  );
  const purged = { records: records.purged, events: events.purged };
  const failures = [...records.failures, ...events.failures];
  if (failures.length > 0) throw new PurgeError(failures, purged);
  return purged;
}

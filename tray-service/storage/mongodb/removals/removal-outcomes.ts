import type { Collection, Db } from 'mongodb';
import type { RecordPosition } from '../../../domain/page-cursor.ts';
import {
  summariseRemoval,
  type RemovalTally,
  type RemovalOutcome,
  type RemovalTrayChange,
} from '../../../domain/removal-tray-change.ts';
import type { RemovalOutcomesPort } from '../../port.ts';
import { TRAY_REMOVAL_CHANGES, TRAY_REMOVAL_OUTCOMES } from '../collections/collection-names.ts';
import { insertCoalesced } from '../driver/coalesced-writes.ts';
import { ignoreDuplicates } from '../driver/ignore-duplicates.ts';
import type { RemovalChangeDoc, RemovalOutcomeDoc } from '../collections/tray-removal-outcomes-collection.ts';

/** Tries of one run to add its outcome while other runs of the event add theirs. */
const MAX_OUTCOME_TRIES = 20;

/** A change's place in (user, key) order as one string: U+0001 sorts before every character an id is made of (PostgreSQL, under FerretDB, refuses NUL in JSON). */
const positionOf = ({ userId, key }: RecordPosition) => `${userId}\u0001${key}`;

/**
 * Records what one application of a removal event changed (applyRemovals calls it once the
 * records are written, before it drops its work notes). Counts are added to those of an earlier
 * application of the same event (a retry finds nothing left and adds 0); the changes are listed
 * while fewer than REMOVAL_CHANGES_LISTED are, insert-only. Without transactions, a worker that
 * dies between writing the records and this leaves those changes uncounted
 * (docs/storage.md#removals).
 */
export async function recordRemovalOutcome(
  db: Db,
  eventKey: string,
  applied: { voided: number; tally: RemovalTally },
  expiresAt: Date,
): Promise<void> {
  const outcomes = db.collection<RemovalOutcomeDoc>(TRAY_REMOVAL_OUTCOMES);
  let listed: RemovalTrayChange[] | undefined;
  for (let attempt = 0; listed === undefined; attempt += 1) {
    // Each lost try is another run's win; this many means a read that never sees the primary's state.
    if (attempt === MAX_OUTCOME_TRIES)
      throw new Error(`removal outcome of ${eventKey}: too many runs at once`);
    // From the primary: a secondary's older count (readPreference in MONGODB_URI) would never match.
    const earlier = await outcomes.findOne(
      { _id: eventKey },
      { projection: { listed: 1 }, readPreference: 'primary' },
    );
    const summary = summariseRemoval(applied.voided, applied.tally, earlier?.listed ?? 0);
    // Added only if no other run of the event (a stalled job taken over) listed changes since the
    // read, else read again and cut again: two runs that both read the count before either added
    // theirs listed up to the bound each (PostgreSQL reads it under a row lock).
    if (await addOutcome(outcomes, eventKey, earlier?.listed, summary.outcome, expiresAt))
      listed = summary.listed;
  }
  if (listed.length === 0) return;
  await insertCoalesced<RemovalChangeDoc>(
    db,
    TRAY_REMOVAL_CHANGES,
    listed.map((change) => ({
      ...change,
      _id: JSON.stringify([eventKey, change.userId, change.key]),
      eventKey,
      position: positionOf(change),
      expiresAt,
    })),
  );
}

/**
 * Adds `outcome` to the event's counts if `listed` is still what it was read as (undefined: no
 * outcome yet), keeping the later expiry; false when another run got there first.
 */
async function addOutcome(
  outcomes: Collection<RemovalOutcomeDoc>,
  eventKey: string,
  listed: number | undefined,
  outcome: RemovalOutcome,
  expiresAt: Date,
): Promise<boolean> {
  if (listed === undefined)
    return (
      (await ignoreDuplicates(outcomes.insertOne({ _id: eventKey, ...outcome, expiresAt }))).length === 0
    );
  const { matchedCount } = await outcomes.updateOne(
    { _id: eventKey, listed },
    { $inc: { ...outcome }, $max: { expiresAt } },
  );
  return matchedCount === 1;
}

/** The recorded outcomes, read by the admin API. */
export function createMongoRemovalOutcomes(db: Db): RemovalOutcomesPort {
  return {
    async outcome(eventKey) {
      const doc = await db.collection<RemovalOutcomeDoc>(TRAY_REMOVAL_OUTCOMES).findOne({ _id: eventKey });
      if (!doc) return undefined;
      const { voided, shrunk, replaced, removed, listed } = doc;
      return { voided, shrunk, replaced, removed, listed };
    },
    async changes(eventKey, limit, after) {
      const docs = await db
        .collection<RemovalChangeDoc>(TRAY_REMOVAL_CHANGES)
        .find(after ? { eventKey, position: { $gt: positionOf(after) } } : { eventKey }, {
          projection: { _id: 0, eventKey: 0, position: 0, expiresAt: 0 },
        })
        .sort({ eventKey: 1, position: 1 })
        .limit(limit + 1)
        .toArray();
      const items: RemovalTrayChange[] = docs.slice(0, limit);
      const last = items.at(-1);
      return docs.length > limit && last
        ? { items, next: { userId: last.userId, key: last.key } }
        : { items };
    },
  };
}

import type { AnyBulkWriteOperation, Db, Document } from 'mongodb';
import { groupCommit } from '../../../../shared/async/group-commit.ts';
import { LAG_BUCKETS, lagBucket } from '../../../domain/lag-histogram.ts';
import type { EventMinute, LagMinute } from '../../port.ts';
import { EVENT_LAG_MINUTES, EVENT_MINUTES } from '../collection-names.ts';
import { writeErrorsOf, isDuplicateKey } from '../compare-and-set/is-duplicate-key.ts';

const MINUTE_MS = 60_000;

/** One minute's count of one event name (event_minutes). */
interface EventMinuteDoc {
  /** `${minute ISO}|${event}`. */
  _id: string;
  minute: Date;
  event: string;
  count: number;
  /** The latest expiry of the events counted: kept while any of them is. */
  expiresAt: Date;
}

/** One minute's lag histogram (event_lag_minutes); `b` holds the bucket counts by bucket number. */
interface LagMinuteDoc {
  /** The minute, ISO. */
  _id: string;
  minute: Date;
  count: number;
  b: Record<string, number>;
  maxMs: number;
  expiresAt: Date;
}

/** What this file writes: documents with a string `_id`. */
type RollupDoc = { _id: string } & Document;

/** An increment of one rollup document. */
interface Increment {
  collection: string;
  _id: string;
  insert: Document;
  inc: Record<string, number>;
  max: Record<string, number | Date>;
}

const minuteOf = (at: Date) => new Date(Math.floor(at.getTime() / MINUTE_MS) * MINUTE_MS);

const later = (a: number | Date, b: number | Date) => (a >= b ? a : b);

/**
 * Upserts the increments as one unordered bulk of single-document `updateMany`s (FerretDB hangs
 * on bulks of matching `updateOne`s; coalesced-writes.ts). Increments of the same document are
 * added up first. An upsert that lost the race to insert a new document (FerretDB runs an upsert
 * as a read then a write) is run again once, as an update of the document now there.
 */
async function applyIncrements(db: Db, increments: readonly Increment[]): Promise<void> {
  const merged = new Map<string, Increment>();
  for (const increment of increments) {
    const id = `${increment.collection}\u0000${increment._id}`;
    const held = merged.get(id);
    if (!held) {
      merged.set(id, {
        ...increment,
        inc: { ...increment.inc },
        max: { ...increment.max },
      });
      continue;
    }
    for (const [field, by] of Object.entries(increment.inc)) held.inc[field] = (held.inc[field] ?? 0) + by;
    for (const [field, value] of Object.entries(increment.max)) {
      const kept = held.max[field];
      held.max[field] = kept === undefined ? value : later(kept, value);
    }
  }
  const byCollection = new Map<string, Increment[]>();
  for (const increment of merged.values()) {
    byCollection.set(increment.collection, [...(byCollection.get(increment.collection) ?? []), increment]);
  }
  for (const [name, list] of byCollection) {
    const operations: AnyBulkWriteOperation<RollupDoc>[] = list.map((increment) => ({
      updateMany: {
        filter: { _id: increment._id },
        update: {
          $setOnInsert: increment.insert,
          $inc: increment.inc,
          $max: increment.max,
        },
        upsert: true,
      },
    }));
    let retry: AnyBulkWriteOperation<RollupDoc>[] = [];
    try {
      await db.collection<RollupDoc>(name).bulkWrite(operations, { ordered: false });
    } catch (error) {
      const errors = writeErrorsOf(error) as { code?: unknown; index?: number }[];
      if (errors.length === 0 || !errors.every(isDuplicateKey)) throw error;
      retry = errors.map((failed) => operations[failed.index ?? 0]).filter((op) => op !== undefined);
    }
    if (retry.length > 0) await db.collection<RollupDoc>(name).bulkWrite(retry, { ordered: false });
  }
}

/** One submitter per database and process: increments never race each other within a process. */
const submitters = new WeakMap<Db, (increments: readonly Increment[]) => Promise<undefined[]>>();

function submitterOf(db: Db) {
  let submit = submitters.get(db);
  if (!submit) {
    // One flush at a time: FerretDB's updates are not atomic, and two flushes adding to the same
    // minute at once could lose one's increment (MongoDB's $inc is atomic; across processes
    // FerretDB can still lose one: docs/storage.md).
    submit = groupCommit<Increment, undefined>(
      async (batch) => {
        await applyIncrements(db, batch);
        return batch.map(() => undefined);
      },
      { maxBatch: 1_000, maxInFlight: 1 },
    );
    submitters.set(db, submit);
  }
  return submit;
}

/**
 * The events' per-minute rollups on MongoDB: counters kept with `$inc` as events are stored and
 * applied (the bucket and computed patterns), read by a range of minutes on their index. No
 * transaction joins a counter to its event (MongoDB's multi-document transactions are outside what
 * this adapter uses): a process that stops between the two leaves that one event uncounted. A
 * minute keeps the latest expiry of the events it counts (`$max` of each one's own), as
 * PostgreSQL's rows do: its counts stay while any of them is.
 */
export function createEventRollups(db: Db, clock: () => Date = () => new Date()) {
  const submit = submitterOf(db);
  return {
    /** Counts a newly stored event into its minute. */
    async countStored(event: { event: string; receivedAt: Date; expiresAt: Date }): Promise<void> {
      const minute = minuteOf(event.receivedAt);
      await submit([
        {
          collection: EVENT_MINUTES,
          _id: `${minute.toISOString()}|${event.event}`,
          insert: { minute, event: event.event },
          inc: { count: 1 },
          max: { expiresAt: event.expiresAt },
        },
      ]);
    },

    /** Counts an event's first mark as applied into its minute's histogram. */
    async countApplied(event: { receivedAt: Date; expiresAt: Date }, appliedAt: Date): Promise<void> {
      const minute = minuteOf(event.receivedAt);
      const lag = Math.max(0, appliedAt.getTime() - event.receivedAt.getTime());
      await submit([
        {
          collection: EVENT_LAG_MINUTES,
          _id: minute.toISOString(),
          insert: { minute },
          inc: { count: 1, [`b.${lagBucket(lag)}`]: 1 },
          max: { maxMs: lag, expiresAt: event.expiresAt },
        },
      ]);
    },

    async perMinute(since: Date, until: Date): Promise<EventMinute[]> {
      // Counted by name in a Map: a name is the sender's, and as a property of a plain object
      // `constructor` or `__proto__` would read or set what every object inherits.
      const minutes = new Map<number, { minute: Date; counts: Map<string, number> }>();
      const docs = await db
        .collection<EventMinuteDoc>(EVENT_MINUTES)
        .find({ minute: { $gte: since, $lt: until }, expiresAt: { $gt: clock() } })
        .sort({ minute: 1 })
        .toArray();
      for (const doc of docs) {
        const at = doc.minute.getTime();
        let minute = minutes.get(at);
        if (!minute) minutes.set(at, (minute = { minute: doc.minute, counts: new Map() }));
        minute.counts.set(doc.event, (minute.counts.get(doc.event) ?? 0) + doc.count);
      }
      // fromEntries defines each name as an own key, `__proto__` included.
      return [...minutes.values()].map(({ minute, counts }): EventMinute => ({
        minute,
        counts: Object.fromEntries(counts),
      }));
    },

    async lagPerMinute(since: Date, until: Date): Promise<LagMinute[]> {
      const docs = await db
        .collection<LagMinuteDoc>(EVENT_LAG_MINUTES)
        .find({ minute: { $gte: since, $lt: until }, expiresAt: { $gt: clock() } })
        .sort({ minute: 1 })
        .toArray();
      return docs.map((doc) => ({
        minute: doc.minute,
        count: doc.count,
        buckets: Array.from({ length: LAG_BUCKETS }, (_, index) => doc.b?.[String(index)] ?? 0),
        maxMs: doc.maxMs,
      }));
    },
  };
}

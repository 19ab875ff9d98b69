import { MINUTE_MS } from '../../../../shared/time/durations.ts';
import type { AnyBulkWriteOperation, Db, Document, UpdateFilter } from 'mongodb';
import { groupCommit } from '../../../../shared/async/group-commit.ts';
import { LAG_BUCKETS, lagBucket } from '../../../domain/lag-histogram.ts';
import type { EventMinute, LagMinute } from '../../port.ts';
import { EVENT_LAG_MINUTES, EVENT_MINUTES } from '../collections/collection-names.ts';
import { onlyDuplicateKeys, writeErrorsOf } from '../driver/is-duplicate-key.ts';

/** One minute's count of one event name (event_minutes). */
export interface EventMinuteDoc {
  /** `${minute ISO}|${event}`. */
  _id: string;
  minute: Date;
  event: string;
  count: number;
  /** The latest expiry of the events counted: kept while any of them is. */
  expiresAt: Date;
  /** The counts made whose events are not yet marked counted (see createEventRollups). */
  pending?: string[];
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
  pending?: string[];
}

/** What this file writes: documents with a string `_id` and their pending tokens. */
type RollupDoc = { _id: string } & Document;

/**
 * `pending`'s array operators. The driver's types refuse any array operator on a schema with an
 * index signature (RollupDoc's counters are field paths built here), so they are spelled once.
 */
const pendingOps = {
  push: (tokens: readonly string[]) =>
    ({ pending: { $each: [...tokens] } }) as unknown as UpdateFilter<RollupDoc>['$push'],
  // `$pullAll`, not `$pull` with `$in`: FerretDB 1.24 ignores the latter (no error, nothing taken).
  pullAll: (tokens: readonly string[]) =>
    ({ pending: [...tokens] }) as unknown as UpdateFilter<RollupDoc>['$pullAll'],
};

/** One event's increment of one rollup document, made once: `token` names it. */
interface Increment {
  kind: 'count';
  collection: string;
  _id: string;
  token: string;
  insert: Document;
  inc: Record<string, number>;
  max: Record<string, number | Date>;
}

/** The end of an increment's `pending` mark: its event is marked counted. */
interface Release {
  kind: 'release';
  collection: string;
  _id: string;
  token: string;
}

type RollupWrite = Increment | Release;

/** The UTC minute a time falls in. */
export const minuteOf = (at: Date) => new Date(Math.floor(at.getTime() / MINUTE_MS) * MINUTE_MS);

/** The `_id` of a minute's count of one event name. */
export const eventMinuteId = (minute: Date, event: string) => `${minute.toISOString()}|${event}`;

const later = (a: number | Date, b: number | Date) => (a >= b ? a : b);

/** One increment of a document's whole share of a flush, tokens and all. */
interface Merged {
  collection: string;
  _id: string;
  tokens: string[];
  insert: Document;
  inc: Record<string, number>;
  max: Record<string, number | Date>;
  parts: Increment[];
}

function merge(increments: readonly Increment[]): Merged[] {
  const merged = new Map<string, Merged>();
  for (const increment of increments) {
    const id = `${increment.collection}\u0000${increment._id}`;
    const held = merged.get(id);
    if (!held) {
      merged.set(id, {
        collection: increment.collection,
        _id: increment._id,
        tokens: [increment.token],
        insert: increment.insert,
        inc: { ...increment.inc },
        max: { ...increment.max },
        parts: [increment],
      });
      continue;
    }
    // The same event twice in one flush (two calls resuming it) is counted once.
    if (held.tokens.includes(increment.token)) continue;
    held.tokens.push(increment.token);
    held.parts.push(increment);
    for (const [field, by] of Object.entries(increment.inc)) held.inc[field] = (held.inc[field] ?? 0) + by;
    for (const [field, value] of Object.entries(increment.max)) {
      const kept = held.max[field];
      held.max[field] = kept === undefined ? value : later(kept, value);
    }
  }
  return [...merged.values()];
}

const byCollection = <T extends { collection: string }>(items: readonly T[]) => {
  const grouped = new Map<string, T[]>();
  for (const item of items) grouped.set(item.collection, [...(grouped.get(item.collection) ?? []), item]);
  return grouped;
};

/**
 * Upserts the increments as one unordered bulk of single-document `updateMany`s (FerretDB hangs
 * on bulks of matching `updateOne`s; coalesced-writes.ts), increments of the same document added
 * up first. Each increment's token is pushed onto the document's `pending` by the update that
 * counts it, and an update only matches a document holding none of its tokens: repeated after a
 * failure or a lost reply, an increment already made counts nothing. An upsert that matched no
 * document but found one there (an increment already made, or a lost race to insert it: FerretDB
 * runs an upsert as a read then a write) runs again event by event, as updates of the document now
 * there, each only where its own token is not pending.
 */
async function applyIncrements(db: Db, increments: readonly Increment[]): Promise<void> {
  for (const [name, list] of byCollection(merge(increments))) {
    const operations: AnyBulkWriteOperation<RollupDoc>[] = list.map((merged) => ({
      updateMany: {
        filter: { _id: merged._id, pending: { $nin: merged.tokens } },
        update: {
          $setOnInsert: merged.insert,
          $inc: merged.inc,
          $max: merged.max,
          $push: pendingOps.push(merged.tokens),
        },
        upsert: true,
      },
    }));
    let retry: AnyBulkWriteOperation<RollupDoc>[] = [];
    try {
      await db.collection<RollupDoc>(name).bulkWrite(operations, { ordered: false });
    } catch (error) {
      if (!onlyDuplicateKeys(error)) throw error;
      const errors = writeErrorsOf(error) as { code?: unknown; index?: number }[];
      retry = errors.flatMap((failed) =>
        (list[failed.index ?? 0]?.parts ?? []).map((part): AnyBulkWriteOperation<RollupDoc> => ({
          updateMany: {
            filter: { _id: part._id, pending: { $ne: part.token } },
            update: { $inc: part.inc, $max: part.max, $push: pendingOps.push([part.token]) },
          },
        })),
      );
    }
    if (retry.length > 0) await db.collection<RollupDoc>(name).bulkWrite(retry, { ordered: false });
  }
}

/** Takes the released tokens off their documents' `pending`, one update per document. */
async function applyReleases(db: Db, releases: readonly Release[]): Promise<void> {
  for (const [name, list] of byCollection(releases)) {
    const tokens = new Map<string, Set<string>>();
    for (const release of list)
      tokens.set(release._id, (tokens.get(release._id) ?? new Set()).add(release.token));
    const operations: AnyBulkWriteOperation<RollupDoc>[] = [...tokens].map(([_id, held]) => ({
      updateMany: { filter: { _id }, update: { $pullAll: pendingOps.pullAll([...held]) } },
    }));
    await db.collection<RollupDoc>(name).bulkWrite(operations, { ordered: false });
  }
}

/** One submitter per database and process: rollup writes never race each other within a process. */
const submitters = new WeakMap<Db, (writes: readonly RollupWrite[]) => Promise<undefined[]>>();

function submitterOf(db: Db) {
  let submit = submitters.get(db);
  if (!submit) {
    // One flush at a time: FerretDB's updates are not atomic, and two flushes changing the same
    // minute at once could lose one's increment (MongoDB's $inc is atomic; across processes
    // FerretDB can still lose one: docs/storage.md). A flush is safe to repeat (the tokens), so a
    // failed one runs again call by call: a call that cannot succeed fails alone.
    submit = groupCommit<RollupWrite, undefined>(
      async (batch) => {
        await applyIncrements(
          db,
          batch.filter((write) => write.kind === 'count'),
        );
        await applyReleases(
          db,
          batch.filter((write) => write.kind === 'release'),
        );
        return batch.map(() => undefined);
      },
      { maxBatch: 1_000, maxInFlight: 1, isolateFailures: true },
    );
    submitters.set(db, submit);
  }
  return submit;
}

/**
 * What names one event's increment: its key and the time it was stored (each collection counts one
 * kind of write: stored, applied). Stored anew after its expiry, an event counts anew. The applied
 * mark's count is named by the store too, not by the mark's time: two calls marking one event at
 * once (a stalled job taken over, a replay while the job runs) may both pass FerretDB's
 * findOneAndUpdate, which is not atomic, and two times named two counts of one mark.
 */
const tokenOf = (key: string, storedAt: Date) => `${key}|${storedAt.getTime()}`;

/** The stored event a count is made for: its key, and its own expiry, which the count keeps. */
interface CountedEvent {
  _id: string;
  event: string;
  receivedAt: Date;
  storedAt: Date;
  expiresAt: Date;
}

/**
 * The events' per-minute rollups on MongoDB: counters kept with `$inc` as events are stored and
 * applied (the bucket and computed patterns), read by a range of minutes on their index. No
 * transaction joins a counter to its event (MongoDB's multi-document transactions are outside what
 * this adapter uses, and FerretDB has none), so each count is made once by three steps the job's
 * retry can take again (mongo-events.ts): the event is marked pending (`countPending`,
 * `lagPending`), the count is made with its token left on the minute's `pending` (an increment
 * made already is never made again), the event's mark is taken off, and then the token. A minute
 * keeps the latest expiry of the events it counts (`$max`), as PostgreSQL's rows do.
 */
export function createEventRollups(db: Db, clock: () => Date = () => new Date()) {
  const submit = submitterOf(db);
  const storedId = (event: CountedEvent) => eventMinuteId(minuteOf(event.receivedAt), event.event);
  const lagId = (event: CountedEvent) => minuteOf(event.receivedAt).toISOString();
  return {
    /** Counts a stored event into its minute, unless this very store of it is counted already. */
    async countStored(event: CountedEvent): Promise<void> {
      const minute = minuteOf(event.receivedAt);
      await submit([
        {
          kind: 'count',
          collection: EVENT_MINUTES,
          _id: storedId(event),
          token: tokenOf(event._id, event.storedAt),
          insert: { minute, event: event.event },
          inc: { count: 1 },
          max: { expiresAt: event.expiresAt },
        },
      ]);
    },

    /** Ends the count's pending mark, once the event is marked counted. */
    async releaseStored(event: CountedEvent): Promise<void> {
      const token = tokenOf(event._id, event.storedAt);
      await submit([{ kind: 'release', collection: EVENT_MINUTES, _id: storedId(event), token }]);
    },

    /** Counts an event's applied mark into its minute's histogram, unless this mark is counted already. */
    async countApplied(event: CountedEvent, appliedAt: Date): Promise<void> {
      const lag = Math.max(0, appliedAt.getTime() - event.receivedAt.getTime());
      await submit([
        {
          kind: 'count',
          collection: EVENT_LAG_MINUTES,
          _id: lagId(event),
          token: tokenOf(event._id, event.storedAt),
          insert: { minute: minuteOf(event.receivedAt) },
          inc: { count: 1, [`b.${lagBucket(lag)}`]: 1 },
          max: { maxMs: lag, expiresAt: event.expiresAt },
        },
      ]);
    },

    /** Ends the lag count's pending mark, once the event's applied mark is marked counted. */
    async releaseApplied(event: CountedEvent): Promise<void> {
      const token = tokenOf(event._id, event.storedAt);
      await submit([{ kind: 'release', collection: EVENT_LAG_MINUTES, _id: lagId(event), token }]);
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

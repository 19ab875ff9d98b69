import type { AnyBulkWriteOperation, Collection, Db, Document, OptionalUnlessRequiredId } from 'mongodb';
import { groupCommit } from '../../../../shared/async/group-commit.ts';
import { InsertRefusedError } from './insert-refused-error.ts';
import { insertOutcomes, type InsertOutcome } from './insert-outcomes.ts';
import { writeConcernFailureOf } from './write-concern-failure.ts';

/*
 * Group commit of the worker's writes, an adapter mechanism kept on every server for speed, not
 * correctness: a worker runs many jobs at once (TRAY_WORKER_CONCURRENCY), each writing a few
 * documents, and every command waits for its own write concern (a majority of a replica set's
 * members on MongoDB, a PostgreSQL commit on FerretDB). Concurrent jobs' inserts and record
 * updates therefore share a command and pay that wait once. Each caller still learns its own
 * outcome (its duplicates; whether its updates all matched), so the write protocol is the same
 * as with a command per caller. A caller's bad data fails that caller alone (a document the server
 * refuses, or one the driver cannot send): one poison job must not fail every job that happened
 * to share its command, on every retry of theirs.
 */

/**
 * Documents per insert command: large enough that a busy worker's concurrent jobs share one
 * command, small enough to stay far below the server's batch and message limits.
 */
const MAX_INSERTS = 256;
/**
 * Operations per bulk write. FerretDB 1.24 on PostgreSQL runs a thousand single-document
 * `updateMany`s in one bulk in about a second (and hangs on 50 matching `updateOne`s: never
 * submit those here).
 */
export const MAX_BULK_OPERATIONS = 1_000;
/** Commands in flight per collection; the calls arriving meanwhile form the next batch. */
const MAX_IN_FLIGHT = 2;

type Submit<T, R> = (items: readonly T[]) => Promise<R[]>;
interface Coalescers {
  inserts: Map<string, Submit<Document, InsertOutcome>>;
  bulks: Map<string, Submit<AnyBulkWriteOperation, boolean>>;
}
type SubmitOf<K extends keyof Coalescers> = Coalescers[K] extends Map<string, infer S> ? S : never;
const coalescers = new WeakMap<Db, Coalescers>();

/** The process's one coalescer of `kind` for collection `name` of `db`, made on first use. */
function coalescer<K extends keyof Coalescers>(
  db: Db,
  kind: K,
  name: string,
  make: (collection: Collection) => SubmitOf<K>,
): SubmitOf<K> {
  let found = coalescers.get(db);
  if (!found) coalescers.set(db, (found = { inserts: new Map(), bulks: new Map() }));
  const byName = found[kind] as Map<string, SubmitOf<K>>;
  let submit = byName.get(name);
  if (!submit) byName.set(name, (submit = make(db.collection(name))));
  return submit;
}

/**
 * An unordered insert of `batch`, run once more when its command failed without a word on its
 * documents (no write error, no write concern failure): it may have gone in all the same, its
 * answer lost to a cut connection or to a server restarted between its commit and its reply.
 * MongoDB's retryable writes run such an insert again and the server knows it ran; FerretDB and a
 * standalone MongoDB have none, so the adapter runs it again itself. What went in comes back as
 * duplicate keys, which the callers recognise as theirs where it matters (a version claim by its
 * call's id, a new record by its whole state).
 */
async function insertOnceMore(collection: Collection, batch: readonly Document[]): Promise<InsertOutcome[]> {
  const insert = () => insertOutcomes(collection.insertMany([...batch], { ordered: false }), batch.length);
  try {
    return await insert();
  } catch (error) {
    if (writeConcernFailureOf(error) !== undefined) throw error;
    return insert();
  }
}

/**
 * Inserts `docs` into `name`, sharing the insert command with the concurrent callers of this
 * process (see groupCommit), and returns the indexes of `docs` that were duplicate keys (a
 * redelivery, or a concurrent writer that inserted the same `_id` first). Unordered: each
 * document is inserted or refused on its own, as with `insertMany({ordered: false})`. A document
 * the server refuses fails its own caller (InsertRefusedError), whatever became of the others; a
 * command that fails as a whole (a document the driver cannot send, say) is run again once, then
 * caller by caller, so only the caller that cannot succeed fails. Inserts are idempotent, so each
 * retries safely; a caller's own document may come back from a retry as a duplicate.
 */
export async function insertCoalesced<T extends Document>(
  db: Db,
  name: string,
  docs: readonly OptionalUnlessRequiredId<T>[],
): Promise<number[]> {
  const submit = coalescer(db, 'inserts', name, (collection) =>
    groupCommit<Document, InsertOutcome>((batch) => insertOnceMore(collection, batch), {
      maxBatch: MAX_INSERTS,
      maxInFlight: MAX_IN_FLIGHT,
      isolateFailures: true,
    }),
  );
  const outcomes = await submit(docs as readonly Document[]);
  const duplicates: number[] = [];
  for (const [index, outcome] of outcomes.entries()) {
    if (outcome === 'duplicate') duplicates.push(index);
    else if (outcome !== 'inserted') throw new InsertRefusedError(name, outcome.refused);
  }
  return duplicates;
}

/**
 * Runs `operations` (at most MAX_BULK_OPERATIONS) as part of one unordered bulk write shared with
 * the concurrent callers of this process. Resolves true when every operation of the shared bulk
 * matched its filter; false when some did not, and then the caller cannot tell whether its own
 * did (the server reports the bulk's total only), so it must read its documents again. Meant for
 * compare-and-set writes, whose filters name the state they were computed from: a failed bulk is
 * therefore safe to run again caller by caller (an update that went in no longer matches, and its
 * caller reads again), so only the caller that cannot succeed fails.
 */
export async function bulkWriteCoalesced<T extends Document>(
  db: Db,
  name: string,
  operations: readonly AnyBulkWriteOperation<T>[],
): Promise<boolean> {
  if (operations.length > MAX_BULK_OPERATIONS)
    throw new RangeError(
      `bulkWriteCoalesced: ${operations.length} operations, at most ${MAX_BULK_OPERATIONS}`,
    );
  const submit = coalescer(db, 'bulks', name, (collection) =>
    groupCommit<AnyBulkWriteOperation, boolean>(
      async (batch) => {
        const result = await collection.bulkWrite([...batch], { ordered: false });
        return batch.map(() => result.matchedCount === batch.length);
      },
      { maxBatch: MAX_BULK_OPERATIONS, maxInFlight: MAX_IN_FLIGHT, isolateFailures: true },
    ),
  );
  const matched = await submit(operations as readonly AnyBulkWriteOperation[]);
  return matched.every(Boolean);
}

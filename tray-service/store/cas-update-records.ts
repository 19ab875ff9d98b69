import { MongoBulkWriteError, type AnyBulkWriteOperation, type Db } from 'mongodb';
import { TRAY_RECORDS, type TrayRecordDoc } from '../../shared/tray/tray-record.ts';

const DUPLICATE_KEY = 11000;

/** Computes a record's next state from its current one (undefined: no record yet). Must be pure. */
export type ComputeRecord = (key: string, current: TrayRecordDoc | undefined) => TrayRecordDoc | 'unchanged';

export interface CasResult {
  /** Records inserted or replaced. */
  written: number;
  /** Read-compute-write rounds; more than 1 means concurrent writers collided and were retried. */
  rounds: number;
}

/**
 * Optimistic compare-and-set over many records at once (DESIGN.md "Storage rules": no
 * transactions or update pipelines on FerretDB). One round = one `$in` read, a pure compute, one
 * unordered bulkWrite: inserts for new records (a concurrent insert fails with a duplicate key) and
 * replaces filtered on {_id, version} (a concurrent update makes the filter miss). Collided keys
 * are read again and recomputed; because `compute` is idempotent, records whose write did land
 * come out 'unchanged', so nothing is applied twice.
 */
export async function casUpdateRecords(
  db: Db,
  keys: readonly string[],
  compute: ComputeRecord,
  maxRounds = 20,
): Promise<CasResult> {
  const records = db.collection<TrayRecordDoc>(TRAY_RECORDS);
  let pending = [...new Set(keys)];
  let written = 0;
  let rounds = 0;
  while (pending.length > 0) {
    if (++rounds > maxRounds) {
      // Thrown, so bull retries the job later: a record this contended is a transient state.
      throw new Error(`tray records still contended after ${maxRounds} rounds (${pending.length} records)`);
    }
    const current = await records
      .find({ _id: { $in: pending } }, { batchSize: pending.length + 1 })
      .toArray();
    const byKey = new Map(current.map((doc) => [doc._id, doc]));
    const ops: AnyBulkWriteOperation<TrayRecordDoc>[] = [];
    const opKeys: string[] = [];
    for (const key of pending) {
      const before = byKey.get(key);
      const next = compute(key, before);
      if (next === 'unchanged') continue;
      opKeys.push(key);
      if (before) {
        const { _id, ...replacement } = next;
        ops.push({ replaceOne: { filter: { _id, version: before.version }, replacement } });
      } else {
        ops.push({ insertOne: { document: next } });
      }
    }
    if (ops.length === 0) break;
    const outcome = await writeAll(db, ops);
    const replaces = ops.filter((op) => 'replaceOne' in op).length;
    written += outcome.inserted + outcome.matched;
    const retry = new Set(outcome.failedIndexes.map((index) => opKeys[index] ?? ''));
    // A replace that missed its filter does not say which one; re-read every replaced key.
    if (outcome.matched < replaces)
      opKeys.forEach((key, index) => 'replaceOne' in ops[index]! && retry.add(key));
    retry.delete('');
    pending = [...retry];
  }
  return { written, rounds };
}

interface WriteOutcome {
  inserted: number;
  matched: number;
  /** Indexes (in `ops`) of inserts that lost a race to a concurrent insert. */
  failedIndexes: number[];
}

async function writeAll(db: Db, ops: AnyBulkWriteOperation<TrayRecordDoc>[]): Promise<WriteOutcome> {
  try {
    const result = await db.collection<TrayRecordDoc>(TRAY_RECORDS).bulkWrite(ops, { ordered: false });
    return { inserted: result.insertedCount, matched: result.matchedCount, failedIndexes: [] };
  } catch (error) {
    if (!(error instanceof MongoBulkWriteError)) throw error;
    const writeErrors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
    // Only a lost insert race is expected; anything else (or a write concern error) is retried by bull.
    if (error.err || writeErrors.length === 0 || writeErrors.some((w) => w.code !== DUPLICATE_KEY))
      throw error;
    return {
      inserted: error.result.insertedCount,
      matched: error.result.matchedCount,
      failedIndexes: writeErrors.map((w) => w.index),
    };
  }
}

import { setTimeout as sleep } from 'node:timers/promises';
import { MongoBulkWriteError, type AnyBulkWriteOperation, type Db } from 'mongodb';
import { TRAY_RECORDS, type TrayRecordDoc } from '../../shared/tray/tray-record.ts';
import { claimVersions } from './claim-versions.ts';

const DUPLICATE_KEY = 11000;

/** Computes a record's next state from its current one (undefined: no record yet). Must be pure. */
export type ComputeRecord = (key: string, current: TrayRecordDoc | undefined) => TrayRecordDoc | 'unchanged';

export interface CasOptions {
  /** The job's dedupe key, recorded on its claims (see claimVersions). */
  owner: string;
  maxRounds?: number;
  /** See ClaimOptions.takeoverMs. */
  claimTakeoverMs?: number;
}

export interface CasResult {
  /** Records inserted or updated. */
  written: number;
  /** Read-compute-write rounds; more than 1 means concurrent writers collided and were retried. */
  rounds: number;
}

/**
 * Optimistic compare-and-set over many records at once (DESIGN.md "Storage rules": no
 * transactions or update pipelines on FerretDB). One round: one `$in` read, a pure compute, then
 * - new records: one unordered insert (a concurrent insert of the same record fails on `_id`);
 * - changed records: one unordered claim insert of `record#nextVersion` (claimVersions), then one
 *   `updateMany` per group of records moving to the same state, filtered on {_id: {$in}, version}.
 * Keys that lost a race are read again and recomputed; `compute` is idempotent, so a record whose
 * write did land comes out 'unchanged' and nothing is applied twice.
 */
export async function casUpdateRecords(
  db: Db,
  keys: readonly string[],
  compute: ComputeRecord,
  options: CasOptions,
): Promise<CasResult> {
  const maxRounds = options.maxRounds ?? 50;
  const records = db.collection<TrayRecordDoc>(TRAY_RECORDS);
  let pending = [...new Set(keys)];
  let written = 0;
  let rounds = 0;
  while (pending.length > 0) {
    if (++rounds > maxRounds) {
      // Thrown, so bull retries the job later: a record this contended is a transient state.
      throw new Error(`tray records still contended after ${maxRounds} rounds (${pending.length} records)`);
    }
    // Spread colliding writers apart instead of letting them collide again at once.
    if (rounds > 1) await sleep(Math.random() * Math.min(5 * rounds, 100));
    // A single key is read with a plain `_id` filter, the one filter FerretDB serves from its index.
    const filter = pending.length === 1 ? { _id: pending[0] ?? '' } : { _id: { $in: pending } };
    const current = await records.find(filter, { batchSize: pending.length + 1 }).toArray();
    const byKey = new Map(current.map((doc) => [doc._id, doc]));
    const inserts: TrayRecordDoc[] = [];
    const updates: { before: TrayRecordDoc; next: TrayRecordDoc }[] = [];
    for (const key of pending) {
      const before = byKey.get(key);
      const next = compute(key, before);
      if (next === 'unchanged') continue;
      if (before) updates.push({ before, next });
      else inserts.push(next);
    }
    const won = await claimVersions(
      db,
      updates.map(({ before, next }) => ({ recordId: before._id, version: next.version })),
      { takeoverMs: options.claimTakeoverMs ?? 60_000, owner: options.owner },
    );
    const wonUpdates = updates.filter(({ before }) => won.has(before._id));
    const ops: AnyBulkWriteOperation<TrayRecordDoc>[] = [
      ...inserts.map((document) => ({ insertOne: { document } })),
      ...groupedUpdates(wonUpdates),
    ];
    const retry = new Set(
      updates.filter(({ before }) => !won.has(before._id)).map(({ before }) => before._id),
    );
    if (ops.length > 0) {
      const outcome = await writeAll(db, ops);
      written += outcome.inserted + outcome.matched;
      for (const index of outcome.failedIndexes) retry.add(inserts[index]?._id ?? '');
      // An update that missed its filter does not say which record: re-read every updated key.
      if (outcome.matched < wonUpdates.length) for (const key of won) retry.add(key);
    }
    retry.delete('');
    pending = [...retry];
  }
  return { written, rounds };
}

/**
 * One `updateMany` per group of records whose next state is the same apart from `_id` and
 * `userId`: a post fanned out to a community typically moves thousands of member records the same
 * way. FerretDB runs every update statement in its own transaction (about as slow as a disk sync),
 * so 10,000 replaces would take minutes where one grouped statement takes one. The filter keeps
 * compare-and-set per document: `{_id: {$in}, version}`.
 */
function groupedUpdates(
  updates: { before: TrayRecordDoc; next: TrayRecordDoc }[],
): AnyBulkWriteOperation<TrayRecordDoc>[] {
  const groups = new Map<
    string,
    { ids: string[]; version: number; $set: Partial<TrayRecordDoc>; $unset: Record<string, ''> }
  >();
  for (const { before, next } of updates) {
    const { _id, userId: _userId, ...$set } = next;
    const $unset: Record<string, ''> = {};
    for (const field of Object.keys(before)) if (!(field in next)) $unset[field] = '';
    const key = JSON.stringify([before.version, $set, $unset]);
    const group = groups.get(key);
    if (group) group.ids.push(_id);
    else groups.set(key, { ids: [_id], version: before.version, $set, $unset });
  }
  return [...groups.values()].map(({ ids, version, $set, $unset }) => ({
    updateMany: {
      filter: { _id: { $in: ids }, version },
      update: Object.keys($unset).length > 0 ? { $set, $unset } : { $set },
    },
  }));
}

interface WriteOutcome {
  inserted: number;
  matched: number;
  /** Indexes (in `ops`, inserts first) of inserts that lost a race to a concurrent insert. */
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

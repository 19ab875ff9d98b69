import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import type { AnyBulkWriteOperation, Db } from 'mongodb';
import { TRAY_RECORDS, type TrayRecordDoc } from '../../../shared/tray/tray-record.ts';
import { claimVersions } from './claim-versions.ts';
import { bulkWriteCoalesced, insertCoalesced, MAX_BULK_OPERATIONS } from './coalesced-writes.ts';
import { readByIds } from './read-by-ids.ts';

/** Computes a record's next state from its current one (undefined: no record yet). Must be pure. */
export type ComputeRecord = (key: string, current: TrayRecordDoc | undefined) => TrayRecordDoc | 'unchanged';

/** Current records by key; a key without an entry has no record. */
export type RecordSnapshot = ReadonlyMap<string, TrayRecordDoc>;

/**
 * Single-record updates per bulkWrite. Each is an `updateMany` filtered on `{_id, version}`:
 * FerretDB 1.24 on PostgreSQL hangs on a bulkWrite of 50 or more matching `updateOne`s (each
 * leaves a cursor open), while a thousand single-document `updateMany`s run in about a second.
 */
export const UPDATES_PER_BULK = MAX_BULK_OPERATIONS;

export interface CasOptions {
  /** The job's dedupe key, recorded on its claims (see claimVersions). */
  owner: string;
  maxRounds?: number;
  /** See ClaimOptions.takeoverMs. */
  claimTakeoverMs?: number;
  /**
   * Reads the current records of `keys` (default: by `_id`, a few at a time). A fan-out passes a
   * read of the whole record group by equality instead; `first` spares the first round's read.
   */
  read?: (keys: readonly string[]) => Promise<RecordSnapshot>;
  first?: RecordSnapshot;
  /**
   * The record group `read` returns whole (a fan-out): records of the group moving from the same
   * version to the same state are then written by one `updateMany({group, version})` (see
   * groupedUpdates) instead of one operation each.
   */
  group?: string;
  /**
   * Runs after each round's read and before its compute: re-reads what `compute` depends on (the
   * group's actors). Reading it after the records makes every write that a round's read saw
   * include the actors it was made from.
   */
  refresh?: () => Promise<void>;
  /**
   * Called after each round with the records that round wrote (inserted or updated, as stored),
   * so live streams can be told (docs/live-tray.md). Runs after the writes; it must not throw.
   */
  onWritten?: (records: readonly TrayRecordDoc[]) => Promise<void>;
  /** The writer's clock (epoch ms) for `changedAt`; tests pin it. */
  now?: () => number;
}

export interface CasResult {
  /** Records inserted or updated. */
  written: number;
  /** Read-compute-write rounds; more than 1 means concurrent writers collided and were retried. */
  rounds: number;
}

/**
 * Optimistic compare-and-set over many records at once (no transactions or update pipelines on
 * FerretDB; docs/storage.md). One round: a read, a pure compute, then
 * - new records: one unordered insertMany (a concurrent insert of the same record fails on `_id`);
 * - changed records: one unordered claim insert of `record#nextVersion` (claimVersions), then
 *   single-record updates filtered on `{_id, version}`, a thousand per bulkWrite.
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
  const read = options.read ?? ((wanted: readonly string[]) => readByIds(db, wanted));
  const now = options.now ?? Date.now;
  /** What this call tried to write per key: a chunk whose bulk missed does not say which landed. */
  const attempted = new Map<string, TrayRecordDoc>();
  let pending = [...new Set(keys)];
  let snapshot = options.first;
  let written = 0;
  let rounds = 0;
  while (pending.length > 0) {
    if (++rounds > maxRounds) {
      // Thrown, so bull retries the job later: a record this contended is a transient state.
      throw new Error(`tray records still contended after ${maxRounds} rounds (${pending.length} records)`);
    }
    // Spread colliding writers apart instead of letting them collide again at once.
    if (rounds > 1) await sleep(Math.random() * Math.min(5 * rounds, 100));
    const current = snapshot ?? (await read(pending));
    snapshot = undefined;
    if (options.refresh) await options.refresh();
    const inserts: TrayRecordDoc[] = [];
    const updates: { before: TrayRecordDoc; next: TrayRecordDoc }[] = [];
    /** Records of an earlier round's missed chunk that did land: written by this call after all. */
    const landed: TrayRecordDoc[] = [];
    const changedAt = now();
    for (const key of pending) {
      const before = current.get(key);
      const tried = attempted.get(key);
      // Recognised by its whole state, not its version and changedAt: a concurrent writer on the
      // same clock (a pinned one, or the same millisecond) writes those same two values with other
      // content, and taking its write for ours would drop this call's change.
      if (before && tried && sameState(before, tried)) {
        landed.push(before);
        continue;
      }
      const computed = compute(key, before);
      if (computed === 'unchanged') continue;
      const next = { ...computed, changedAt };
      if (before) updates.push({ before, next });
      else inserts.push(next);
    }
    const won = await claimVersions(
      db,
      updates.map(({ before, next }) => ({
        recordId: before._id,
        version: next.version,
        state: stateFingerprint(next),
      })),
      { takeoverMs: options.claimTakeoverMs ?? 60_000, owner: options.owner },
    );
    // Only what this call may have written: an insert that met a concurrent one's `_id`, or an
    // update whose claim went to another writer, did not land and must never pass for ours.
    for (const { before, next } of updates) if (won.has(before._id)) attempted.set(before._id, next);
    const retry = new Set(
      updates.filter(({ before }) => !won.has(before._id)).map(({ before }) => before._id),
    );
    const inserted = await insertRecords(db, inserts);
    // Landed writes of a bulk that did not report them are counted when recognised.
    written += inserted.count + landed.length;
    for (const key of inserted.lost) retry.add(key);
    const lost = new Set(inserted.lost);
    for (const next of inserts) if (!lost.has(next._id)) attempted.set(next._id, next);
    const confirmed = [...landed, ...inserts.filter((doc) => !lost.has(doc._id))];
    let wonUpdates = updates.filter(({ before }) => won.has(before._id));
    if (options.group !== undefined) {
      const grouped = await writeGroupedUpdates(db, options.group, current, wonUpdates, won);
      written += grouped.written;
      for (const key of grouped.retry) retry.add(key);
      confirmed.push(...grouped.confirmed);
      wonUpdates = grouped.single;
    }
    for (let start = 0; start < wonUpdates.length; start += UPDATES_PER_BULK) {
      const chunk = wonUpdates.slice(start, start + UPDATES_PER_BULK);
      // Shared with the concurrent jobs' record writes: one bulk for many comments.
      const matched = await bulkWriteCoalesced<TrayRecordDoc>(db, TRAY_RECORDS, chunk.map(updateOperation));
      // An update that missed its filter does not say which record: re-read every key of the chunk
      // (the next round recognises the ones that did land by their version and changedAt).
      if (!matched) for (const { before } of chunk) retry.add(before._id);
      else {
        written += chunk.length;
        confirmed.push(...chunk.map(({ next }) => next));
      }
    }
    if (options.onWritten && confirmed.length > 0) await options.onWritten(confirmed);
    pending = [...retry];
  }
  return { written, rounds };
}

/** A record's fields in one order, so two reads of one state compare equal. */
function canonical(value: unknown): unknown {
  if (value instanceof Date) return value.getTime();
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, field]) => field !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([name, field]) => [name, canonical(field)]),
    );
  }
  return value;
}

/** Whether a record as read is exactly the state this call tried to write. */
const sameState = (read: TrayRecordDoc, tried: TrayRecordDoc) =>
  JSON.stringify(canonical(read)) === JSON.stringify(canonical(tried));

/**
 * What a claim is for: the next state without the write's own clock (changedAt, unreadAt), so a
 * retry of the same job, which computes the same state later, recognises its claim (claimVersions).
 */
function stateFingerprint(next: TrayRecordDoc): string {
  const { changedAt: _changedAt, unreadAt: _unreadAt, ...state } = next;
  return createHash('sha256')
    .update(JSON.stringify(canonical(state)))
    .digest('base64url');
}

/** Records a grouped statement may leave out by `_id` (FerretDB filters `$nin` after the group lookup). */
const MAX_EXCLUDED = 10;

interface Update {
  before: TrayRecordDoc;
  next: TrayRecordDoc;
}

interface Change {
  $set: Partial<TrayRecordDoc>;
  $unset: Record<string, ''>;
}

/** The fields a write changes: what differs from the record read, and what it no longer has. */
function changes({ before, next }: Update): Change {
  const $set: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(next)) {
    if (!isDeepStrictEqual(value, (before as unknown as Record<string, unknown>)[field])) $set[field] = value;
  }
  const $unset: Record<string, ''> = {};
  for (const field of Object.keys(before)) if (!(field in next)) $unset[field] = '';
  return { $set: $set as Partial<TrayRecordDoc>, $unset };
}

/**
 * A post fanned out to a community moves most members' records from one version to the same next
 * state. FerretDB rewrites each matched document either way, but one statement for all of them
 * costs a fraction of a thousand single-record operations. A class is written so only when the
 * statement's filter selects exactly it: `{group, version, actorsCount, countFrom}` minus at most
 * MAX_EXCLUDED records of the group read with those values that are not in it (the author's own
 * record, a member who left),
 * and every claim of the class was won here (a concurrent writer of any of them holds a lost
 * claim, so the class is written record by record instead). The claims still make
 * it compare-and-set: nobody else may move these records from this version. The rest are returned
 * as `single`.
 */
async function writeGroupedUpdates(
  db: Db,
  group: string,
  current: RecordSnapshot,
  updates: Update[],
  won: ReadonlySet<string>,
): Promise<{ written: number; retry: string[]; confirmed: TrayRecordDoc[]; single: Update[] }> {
  // A class: records with the same selector moving to the same changes.
  const classes = new Map<string, { selector: Selector; change: Change; ids: string[] }>();
  const single: Update[] = [];
  for (const update of updates) {
    const change = changes(update);
    const { version, ...rest } = change.$set;
    if (version === undefined) {
      single.push(update);
      continue;
    }
    const selector = selectorOf(update.before);
    const key = JSON.stringify([selector, rest, change.$unset]);
    const found = classes.get(key);
    if (found) found.ids.push(update.before._id);
    else classes.set(key, { selector, change, ids: [update.before._id] });
  }
  // The records of the group read, by selector: those a statement would match outside its class
  // are left out by name.
  const bySelector = new Map<string, string[]>();
  for (const record of current.values()) {
    if (record.group !== group) continue;
    const key = JSON.stringify(selectorOf(record));
    const ids = bySelector.get(key);
    if (ids) ids.push(record._id);
    else bySelector.set(key, [record._id]);
  }
  let written = 0;
  const retry: string[] = [];
  const confirmed: TrayRecordDoc[] = [];
  const byId = new Map(updates.map((update) => [update.before._id, update]));
  for (const { selector, change, ids } of classes.values()) {
    const members = new Set(ids);
    const others = (bySelector.get(JSON.stringify(selector)) ?? []).filter((id) => !members.has(id));
    if (ids.length < 2 || others.length > MAX_EXCLUDED || ids.some((id) => !won.has(id))) {
      for (const id of ids) single.push(byId.get(id) as Update);
      continue;
    }
    const { $set, $unset } = change;
    const result = await db
      .collection<TrayRecordDoc>(TRAY_RECORDS)
      .updateMany(
        { group, ...selector, ...(others.length > 0 ? { _id: { $nin: others } } : {}) },
        Object.keys($unset).length > 0 ? { $set, $unset } : { $set },
      );
    // A partial match is counted when the next round recognises what landed.
    if (result.matchedCount < ids.length) retry.push(...ids);
    else {
      written += result.matchedCount;
      for (const id of ids) confirmed.push((byId.get(id) as Update).next);
    }
  }
  return { written, retry, confirmed, single };
}

/**
 * The top-level scalars a grouped statement filters on besides the group. The version keeps it
 * compare-and-set; the count and countFrom tell apart the members whose records move differently
 * at the same version (a member who posted there counts one actor fewer), so classes stay large
 * without naming thousands of exceptions. FerretDB pushes all of them down as equalities.
 */
type Selector = Pick<TrayRecordDoc, 'version' | 'actorsCount' | 'countFrom'>;
const selectorOf = (record: TrayRecordDoc): Selector => ({
  version: record.version,
  actorsCount: record.actorsCount,
  countFrom: record.countFrom,
});

/** The whole next state, filtered on the version it was computed from. */
function updateOperation({
  before,
  next,
}: {
  before: TrayRecordDoc;
  next: TrayRecordDoc;
}): AnyBulkWriteOperation<TrayRecordDoc> {
  const { _id, ...$set } = next;
  const $unset: Record<string, ''> = {};
  for (const field of Object.keys(before)) if (!(field in next)) $unset[field] = '';
  return {
    updateMany: {
      filter: { _id, version: before.version },
      update: Object.keys($unset).length > 0 ? { $set, $unset } : { $set },
    },
  };
}

/** Inserts new records; the ids that a concurrent writer inserted first are returned as lost. */
async function insertRecords(db: Db, inserts: TrayRecordDoc[]): Promise<{ count: number; lost: string[] }> {
  if (inserts.length === 0) return { count: 0, lost: [] };
  const duplicates = await insertCoalesced<TrayRecordDoc>(db, TRAY_RECORDS, inserts);
  return {
    count: inserts.length - duplicates.length,
    lost: duplicates.map((index) => inserts[index]?._id ?? '').filter((id) => id !== ''),
  };
}

import { createHash } from 'node:crypto';
import type { AnyBulkWriteOperation, Db } from 'mongodb';
import { nextChangedAt } from '../../../domain/next-changed-at.ts';
import { TRAY_RECORD_CLAIMS, TRAY_RECORDS } from '../collections/collection-names.ts';
import { type TrayRecordDoc } from '../collections/tray-records-collection.ts';
import { claimVersions } from './claim-versions.ts';
import { bulkWriteCoalesced, insertCoalesced, MAX_BULK_OPERATIONS } from '../driver/coalesced-writes.ts';
import { firstVersion } from './first-version.ts';
import { readByIds } from './read-by-ids.ts';
import { StalledRounds, type StallOptions } from './stalled-rounds.ts';
import type { RecordClaimDoc } from '../collections/tray-record-claims-collection.ts';

/**
 * Computes a record's next state from its current one (undefined: no record yet). Must be pure. A
 * new record is stored at a version of its own (firstVersion), whatever version it was computed with.
 */
export type ComputeRecord = (key: string, current: TrayRecordDoc | undefined) => TrayRecordDoc | 'unchanged';

/** Current records by key; a key without an entry has no record. */
export type RecordSnapshot = ReadonlyMap<string, TrayRecordDoc>;

/**
 * Single-record updates per bulkWrite. Each is an `updateMany` filtered on `{_id, version}`:
 * FerretDB 1.24 on PostgreSQL hangs on a bulkWrite of 50 or more matching `updateOne`s (each
 * leaves a cursor open), while a thousand single-document `updateMany`s run in about a second.
 */
export const UPDATES_PER_BULK = MAX_BULK_OPERATIONS;

/** `backOff` (StallOptions): the wait between rounds at records a concurrent writer holds. */
export interface CasOptions extends StallOptions {
  /** The job's dedupe key, recorded on its claims (see claimVersions). */
  owner: string;
  /** See ClaimOptions.takeoverMs. */
  claimTakeoverMs?: number;
  /**
   * Reads the current records of `keys` (default: by `_id`, a few at a time). A fan-out passes a
   * read of the whole record group by equality instead; `first` spares the first round's read.
   */
  read?: (keys: readonly string[]) => Promise<RecordSnapshot>;
  first?: RecordSnapshot;
  /**
   * Runs after each round's read and before its compute: re-reads what `compute` depends on (the
   * group's actors). Reading it after the records makes every write that a round's read saw
   * include the actors it was made from.
   */
  refresh?: () => Promise<void>;
  /**
   * Called after each round with the records that round wrote (inserted or updated, as this call
   * wrote them: a write found landed under a later writer's state is told as written),
   * so live streams can be told (docs/live-tray.md), and with the changedAt of the state each
   * update replaced, by `_id` (an insert replaced none): a mark's announcement carries it. Runs
   * after the writes; it must not throw.
   */
  onWritten?: (records: readonly TrayRecordDoc[], replaced: ReadonlyMap<string, number>) => Promise<void>;
  /**
   * The writer's clock (epoch ms) for `changedAt`; tests pin it. An update stamps a later one than
   * the record's (nextChangedAt) when this clock is not ahead of it.
   */
  now?: () => number;
  /**
   * Leaves a record whose next version another writer claimed to that writer instead of reading it
   * again until it moves (`left` names them): for a change that writer, or this caller's next
   * call, makes anyway (the snooze wake-up). Waiting instead, one record held by a writer that
   * stopped between claim and write held every call back for the rounds' 12 s, up to the claim's
   * takeover.
   */
  leaveHeld?: boolean;
  /**
   * false: an update keeps the record's `changedAt` (a change no live stream is told of, as
   * last-read's seen mark); inserts are stamped anyway.
   */
  stampChangedAt?: boolean;
}

export interface CasResult {
  /** Records inserted or updated. */
  written: number;
  /** With `leaveHeld`: the records left to the writer that claimed their next version. */
  left: string[];
  /** Read-compute-write rounds; more than 1 means concurrent writers collided and were retried. */
  rounds: number;
}

/**
 * Optimistic compare-and-set over many records at once (no transactions or update pipelines on
 * FerretDB; docs/storage.md). One round: a read, a pure compute, then
 * - new records: one unordered insertMany (a concurrent insert of the same record fails on `_id`),
 *   each at a first version of its own (firstVersion);
 * - changed records, a thousand at a time: one unordered claim insert of `record#nextVersion`
 *   (claimVersions), then their single-record updates filtered on `{_id, version}` in one bulkWrite.
 * Keys that lost a race are read again and recomputed, but for those whose write is found to have
 * landed (its state, or a later version of the same life), so nothing is applied twice. It gives up (the job retries)
 * only after rounds in a row in which none of them moved and nothing was written (StalledRounds):
 * a record a concurrent writer keeps moving is writers taking turns, not a stall.
 */
export async function casUpdateRecords(
  db: Db,
  keys: readonly string[],
  compute: ComputeRecord,
  options: CasOptions,
): Promise<CasResult> {
  const read = options.read ?? ((wanted: readonly string[]) => readByIds(db, wanted));
  const now = options.now ?? Date.now;
  /** What this call tried to write per key: a chunk whose bulk missed does not say which landed. */
  const attempted = new Map<string, TrayRecordDoc>();
  /** The changedAt of the state each update of `attempted` was computed from. */
  const replaced = new Map<string, number>();
  /** The expiresAt of the state each update of `attempted` was computed from. */
  const expiredAt = new Map<string, number>();
  let pending = [...new Set(keys)];
  let snapshot = options.first;
  let written = 0;
  let rounds = 0;
  const left: string[] = [];
  // Thrown, so bull retries the job later: a record held this long is a transient state.
  const stalls = new StalledRounds(() => `tray records ${namedKeys(pending)}`, options);
  /** The version each key to retry was read at (undefined: no record), to tell whether it moved. */
  let readAt = new Map<string, number | undefined>();
  let wroteBefore = 0;
  while (pending.length > 0) {
    if (++rounds > 1) await stalls.wait();
    const current = snapshot ?? (await read(pending));
    snapshot = undefined;
    if (rounds > 1)
      stalls.count(
        written > wroteBefore || pending.some((key) => current.get(key)?.version !== readAt.get(key)),
      );
    wroteBefore = written;
    if (options.refresh) await options.refresh();
    const inserts: TrayRecordDoc[] = [];
    const updates: { before: TrayRecordDoc; next: TrayRecordDoc }[] = [];
    /** Records of an earlier round's missed chunk that did land: written by this call after all. */
    const landed: TrayRecordDoc[] = [];
    const changedAt = now();
    // Also asked of an update tried whose record is gone now, though it had not expired: only a
    // delete-all or a deleted user's removal deletes a live record without a claim, and either may
    // stand after this call's write, which its claim may have been (the update may also have
    // missed: the two overlapped, and either order is theirs). An expired record is deleted by
    // the TTL index or the purge, maybe before the update: its activity starts a new life.
    const deletedLive = (key: string, tried: TrayRecordDoc) =>
      replaced.has(key) && Math.min(expiredAt.get(key) ?? 0, tried.expiresAt.getTime()) > Date.now();
    const heldPast = await stillHeld(
      db,
      pending.flatMap((key) => {
        const before = current.get(key);
        const tried = attempted.get(key);
        if (!tried) return [];
        if (before) return movedPast(before, tried) ? [tried] : [];
        return deletedLive(key, tried) ? [tried] : [];
      }),
      options.owner,
    );
    for (const key of pending) {
      const before = current.get(key);
      const tried = attempted.get(key);
      // Recognised by its whole state, not its version and changedAt: a concurrent writer on the
      // same clock (a pinned one, or the same millisecond) writes those same two values with other
      // content, and taking its write for ours would drop this call's change. Or by a later version
      // of the same life whose claim this call still holds for the state it tried: only its write
      // could have made that version, and the writers after it computed from it; computing this
      // call's change again over theirs would apply it twice (a mark-read over a delivery that came
      // after it). A claim taken over (a call stalled past the takeover) proves nothing.
      if (before && tried && (sameState(before, tried) || heldPast.has(key))) {
        // Told as this call wrote it: the later state is its writer's to tell. Told as that state,
        // a mark's announcement carried the later change time, and a live stream that sent the
        // mark dropped the later writer's own announcement as already delivered.
        landed.push(sameState(before, tried) ? before : tried);
        continue;
      }
      // Deleted while (or after) this call wrote it: neither counted nor told again, and not
      // created again from nothing (a cleared tray's record would come back).
      if (!before && heldPast.has(key)) continue;
      const computed = compute(key, before);
      if (computed === 'unchanged') continue;
      const next =
        before && options.stampChangedAt === false
          ? computed
          : { ...computed, changedAt: nextChangedAt(before?.changedAt, changedAt) };
      if (before) updates.push({ before, next });
      else inserts.push({ ...next, version: firstVersion() });
    }
    const retry = new Set<string>();
    const inserted = await insertRecords(db, inserts);
    // Landed writes of a bulk that did not report them are counted when recognised.
    written += inserted.count + landed.length;
    for (const key of inserted.lost) retry.add(key);
    const lost = new Set(inserted.lost);
    for (const next of inserts) {
      // One lost may be this call's own all the same (an insert run again after its answer was
      // lost): the next round recognises it by its whole state, which no other writer's insert has
      // (each starts at a random version of its own), and never takes another's for it.
      attempted.set(next._id, next);
      replaced.delete(next._id);
      expiredAt.delete(next._id);
    }
    const tell = async (records: readonly TrayRecordDoc[]) => {
      if (options.onWritten && records.length > 0) await options.onWritten(records, replaced);
    };
    await tell([...landed, ...inserts.filter((doc) => !lost.has(doc._id))]);
    for (let start = 0; start < updates.length; start += UPDATES_PER_BULK) {
      // Each bulk's versions claimed just before it is sent: claimed all at once, the later bulks'
      // claims of a round of a whole group (tens of bulks, a minute and more on a loaded server)
      // aged past the takeover while this call still wrote, and another writer took them over
      // and wrote the same version: one change lost.
      const part = updates.slice(start, start + UPDATES_PER_BULK);
      const won = await claimVersions(
        db,
        part.map(({ before, next }) => ({
          recordId: before._id,
          version: next.version,
          state: stateFingerprint(next),
        })),
        { takeoverMs: options.claimTakeoverMs ?? 60_000, owner: options.owner },
      );
      // Only what this call may have written: an insert that met a concurrent one's `_id`, or an
      // update whose claim went to another writer, did not land and must never pass for ours.
      for (const { before, next } of part) {
        if (!won.has(before._id)) continue;
        attempted.set(before._id, next);
        replaced.set(before._id, before.changedAt ?? 0);
        expiredAt.set(before._id, before.expiresAt.getTime());
      }
      const held = part.filter(({ before }) => !won.has(before._id)).map(({ before }) => before._id);
      if (options.leaveHeld) left.push(...held);
      else for (const key of held) retry.add(key);
      // Each bulk stamped when it is sent and told once it is stored: a round of a whole group
      // (a post deleted in a community of 100,000: a hundred bulks) stamped once would be told
      // past a live stream's settle window (domain/settle-window.ts). The claims leave the clock
      // out, and the next round recognises the state as written.
      const at = now();
      const wonPart = part.filter(({ before }) => won.has(before._id));
      if (wonPart.length === 0) continue;
      const chunk = wonPart.map(({ before, next }) => {
        if (options.stampChangedAt === false) return { before, next };
        const stamped = { ...next, changedAt: nextChangedAt(before.changedAt, Math.max(at, changedAt)) };
        attempted.set(before._id, stamped);
        return { before, next: stamped };
      });
      // Shared with the concurrent jobs' record writes: one bulk for many comments.
      const matched = await bulkWriteCoalesced<TrayRecordDoc>(db, TRAY_RECORDS, chunk.map(updateOperation));
      // An update that missed its filter does not say which record: re-read every key of the chunk
      // (the next round recognises the ones that did land by their version and changedAt).
      if (!matched) for (const { before } of chunk) retry.add(before._id);
      else {
        written += chunk.length;
        // Told as each bulk lands; a bulk that fails after them leaves them told (a mark's
        // PartialWriteError names what the bulks before it wrote).
        await tell(chunk.map(({ next }) => next));
      }
    }
    pending = [...retry];
    readAt = new Map(pending.map((key) => [key, current.get(key)?.version]));
  }
  return { written, rounds, left };
}

/**
 * Versions a record's one life reaches between two reads of it, at most: a record created again
 * after a deletion starts at a random version among 2^48 (firstVersion), so a later version this
 * close to the one tried is, but for one chance in 2^28, the same life's.
 */
const SAME_LIFE_SPAN = 1_000_000;

/** Whether `current` is a later version of the same life as `tried`. */
const movedPast = (current: TrayRecordDoc, tried: TrayRecordDoc) =>
  current.version > tried.version && current.version - tried.version <= SAME_LIFE_SPAN;

/** Claims read at once when telling whether writes landed (the rare path after a missed bulk). */
const CLAIM_READS = 16;

/**
 * The keys of `tried` whose claim of the tried version still names `owner` and the tried state:
 * point reads of the claims (FerretDB filters an `$in` over the whole collection, read-by-ids.ts).
 */
async function stillHeld(db: Db, tried: readonly TrayRecordDoc[], owner: string): Promise<Set<string>> {
  const held = new Set<string>();
  const claims = db.collection<RecordClaimDoc>(TRAY_RECORD_CLAIMS);
  for (let start = 0; start < tried.length; start += CLAIM_READS) {
    const chunk = tried.slice(start, start + CLAIM_READS);
    const found = await Promise.all(chunk.map((doc) => claims.findOne({ _id: `${doc._id}#${doc.version}` })));
    chunk.forEach((doc, index) => {
      const claim = found[index];
      if (claim?.owner === owner && claim.state === stateFingerprint(doc)) held.add(doc._id);
    });
  }
  return held;
}

/** The records a stalled call names in its error: the first few keys, and how many more. */
function namedKeys(keys: readonly string[]): string {
  const named = keys.slice(0, 3).join(', ');
  return keys.length > 3 ? `${named} and ${keys.length - 3} more` : named;
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

import { randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { TRAY_RECORD_CLAIMS, TRAY_RECORDS } from '../collections/collection-names.ts';
import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';
import { insertCoalesced } from '../driver/coalesced-writes.ts';
import type { RecordClaimDoc } from '../collections/tray-record-claims-collection.ts';

/**
 * How old a claim of the claimant's own job and state must be before the claimant may use it: a
 * younger one may be a twin's (the same job taken up by two workers at once, as after a queue
 * failover) whose write is still in flight. FerretDB checks an update's `{_id, version}` filter and
 * then writes, not atomically, so that second write of one claim could land after the next
 * writer's version and undo it. A retry after a failure between claim and write waits this long.
 */
export const OWN_CLAIM_REUSE_MS = 10_000;

export interface ClaimOptions {
  /** A claim older than this whose version was never written is taken over (its writer died). */
  takeoverMs: number;
  /** Who claims: the job's dedupe key. */
  owner: string;
  now?: Date;
}

/**
 * Whether the record is at `version` or past it: its claim's writer wrote it. Such a claim is never
 * taken over, however old: its claimant read the record before that write (a fan-out's snapshot
 * may be minutes old) and reads it again next round. Freed, the version could be claimed by a
 * second such claimant, whose update then misses and whose check later takes the record's newer
 * version for its own write, dropping its change.
 */
async function versionWritten(
  db: Db,
  wanted: { recordId: string; version: number } | undefined,
): Promise<boolean> {
  if (!wanted) return false;
  const record = await db
    .collection<Pick<TrayRecordDoc, '_id' | 'version'>>(TRAY_RECORDS)
    .findOne({ _id: wanted.recordId }, { projection: { version: 1 } });
  return record !== null && record.version >= wanted.version;
}

/** Lost claims read at once. */
const LOST_CLAIM_READS = 16;

/**
 * Claims the right to write `version` of each record. The claim is an insert with a unique `_id`,
 * the one write FerretDB 1.24 performs atomically: its updates and replaces are not atomic under
 * concurrency (two `replaceOne({_id, version})` from the same version can both succeed, and `$inc`
 * loses increments), so a filter on `version` alone does not make compare-and-set safe there. On
 * MongoDB the record write's own `{_id, version}` filter would suffice; the claim costs one command.
 * Returns the record ids whose claim this call won; the others were claimed by a concurrent writer.
 */
export async function claimVersions(
  db: Db,
  wanted: readonly { recordId: string; version: number; state: string }[],
  options: ClaimOptions,
): Promise<Set<string>> {
  if (wanted.length === 0) return new Set();
  const now = options.now ?? new Date();
  const claims = db.collection<RecordClaimDoc>(TRAY_RECORD_CLAIMS);
  const expiresAt = new Date(now.getTime() + DAY_MS);
  const call = randomUUID();
  const docs: RecordClaimDoc[] = wanted.map(({ recordId, version, state }) => ({
    _id: `${recordId}#${version}`,
    owner: options.owner,
    state,
    call,
    claimedAt: now,
    expiresAt,
  }));
  const lost = new Set(await insertCoalesced<RecordClaimDoc>(db, TRAY_RECORD_CLAIMS, docs));
  // One more read per lost claim (they are few: only records a concurrent writer is moving). One
  // under this call's id is this call's own, its insert run again after the answer was lost. A
  // claim of this same job for this same state, once older than OWN_CLAIM_REUSE_MS (a retry after a
  // failure between claim and write), is ours to use; a younger one may be a twin's still writing.
  // A claim of the same owner for another state is a concurrent write, not a retry (one job's
  // writes running at once): taking it too would let both move the record from one version, and
  // FerretDB's updates are not atomic. A claim whose writer died before writing would block the
  // record forever: after takeoverMs it is removed and the next round claims again.
  const reusableBefore = now.getTime() - OWN_CLAIM_REUSE_MS;
  const judge = async (index: number) => {
    const doc = docs[index];
    const _id = doc?._id ?? '';
    const claim = await claims.findOne({ _id });
    if (claim?.call === call) lost.delete(index);
    else if (
      claim?.owner === options.owner &&
      (claim.state === undefined || claim.state === doc?.state) &&
      claim.claimedAt.getTime() <= reusableBefore
    )
      lost.delete(index);
    else if (
      claim &&
      claim.claimedAt.getTime() < now.getTime() - options.takeoverMs &&
      !(await versionWritten(db, wanted[index]))
    )
      await claims.deleteOne({ _id, claimedAt: claim.claimedAt });
  };
  // A few at once: two processes fanning out to one community lose thousands of claims to each
  // other, and one read after another made a round of thousands of round trips.
  const judged = [...lost];
  for (let start = 0; start < judged.length; start += LOST_CLAIM_READS)
    await Promise.all(judged.slice(start, start + LOST_CLAIM_READS).map(judge));
  return new Set(wanted.filter((_, index) => !lost.has(index)).map((claim) => claim.recordId));
}

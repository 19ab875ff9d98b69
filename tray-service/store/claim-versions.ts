import { MongoBulkWriteError, type Db } from 'mongodb';
import { TRAY_RECORD_CLAIMS } from '../../shared/tray/tray-record.ts';

const DUPLICATE_KEY = 11000;

/** tray_record_claims: who may move a record to a version (see claimVersions). */
export interface RecordClaimDoc {
  /** `${recordId}#${version}`: the version the claimant is about to write. */
  _id: string;
  /** The job that claimed it (its dedupe key): a retry of that job may go on with its own claim. */
  owner: string;
  claimedAt: Date;
  /** Claims are only needed for the instant of a write; purged (or TTL-deleted) after this. */
  expiresAt: Date;
}

export interface ClaimOptions {
  /** A claim older than this whose version was never written is taken over (its writer died). */
  takeoverMs: number;
  /** Who claims: the job's dedupe key. */
  owner: string;
  now?: Date;
}

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
  wanted: readonly { recordId: string; version: number }[],
  options: ClaimOptions,
): Promise<Set<string>> {
  if (wanted.length === 0) return new Set();
  const now = options.now ?? new Date();
  const claims = db.collection<RecordClaimDoc>(TRAY_RECORD_CLAIMS);
  const docs: RecordClaimDoc[] = wanted.map(({ recordId, version }) => ({
    _id: `${recordId}#${version}`,
    owner: options.owner,
    claimedAt: now,
    expiresAt: new Date(now.getTime() + 24 * 3600 * 1000),
  }));
  const lost = new Set<number>();
  try {
    await claims.insertMany(docs, { ordered: false });
  } catch (error) {
    if (!(error instanceof MongoBulkWriteError)) throw error;
    const writeErrors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
    if (error.err || writeErrors.length === 0 || writeErrors.some((w) => w.code !== DUPLICATE_KEY))
      throw error;
    for (const w of writeErrors) lost.add(w.index);
    // One more read, only when claims were lost. A claim of this same job (a retry after a failure
    // between claim and write) is ours to use: the retry computes the same next state. A claim
    // whose writer died before writing would block the record forever: after takeoverMs it is
    // removed and the next round claims again.
    const held = await claims
      .find({ _id: { $in: [...lost].map((index) => docs[index]?._id ?? '') } })
      .toArray();
    const heldById = new Map(held.map((claim) => [claim._id, claim]));
    const stale: string[] = [];
    for (const index of [...lost]) {
      const claim = heldById.get(docs[index]?._id ?? '');
      if (claim?.owner === options.owner) lost.delete(index);
      else if (claim && claim.claimedAt.getTime() < now.getTime() - options.takeoverMs) stale.push(claim._id);
    }
    if (stale.length > 0)
      await claims.deleteMany({
        _id: { $in: stale },
        claimedAt: { $lt: new Date(now.getTime() - options.takeoverMs) },
      });
  }
  return new Set(wanted.filter((_, index) => !lost.has(index)).map((claim) => claim.recordId));
}

/**
 * Removes the claims a deleted record could still hold: `${_id}#2` up to two past its last version
 * (one claimed by a write in flight, one of margin). A record re-created under the same `_id`
 * starts again at version 1, and a young claim of its previous life would make every write to it
 * lose until takeoverMs (found by the reliability suite, issue 8). Batched, one command per 1,000.
 */
export async function releaseClaims(
  db: Db,
  deleted: readonly { _id: string; version: number }[],
): Promise<void> {
  const ids = deleted.flatMap(({ _id, version }) =>
    Array.from({ length: Math.max(0, version + 1) }, (_, n) => `${_id}#${n + 2}`),
  );
  const claims = db.collection<RecordClaimDoc>(TRAY_RECORD_CLAIMS);
  for (let start = 0; start < ids.length; start += 1_000) {
    await claims.deleteMany({ _id: { $in: ids.slice(start, start + 1_000) } });
  }
}

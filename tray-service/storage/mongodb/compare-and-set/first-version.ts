import { randomInt } from 'node:crypto';

/** Above every creation time in milliseconds, the first versions records had before (2^52 ms: year 144,683). */
const FIRST_VERSIONS_FROM = 2 ** 52;
/** How many first versions there are to draw from (the most node:crypto's randomInt draws from). */
const FIRST_VERSIONS = 2 ** 48 - 1;

/**
 * The version a new record starts at, drawn at random, so a record created again under the same
 * `_id` after a deletion never meets a claim of its previous life (`record#version`, claimVersions):
 * such a claim would hold the new record's next version until takeover, and a writer that read the
 * previous life could write over the new one. Its creation time does not do: every job of a pinned
 * tray clock starts records at the same version, a job taken up before the deletion starts them
 * below the deleted one's, and a record updated more often than once a millisecond runs ahead of
 * the clock. Two lives meet only if the new one's draw falls among the versions the previous one
 * reached, one chance in 2^48 per version (docs/storage.md#compare-and-set).
 */
export function firstVersion(): number {
  return FIRST_VERSIONS_FROM + randomInt(FIRST_VERSIONS);
}

/**
 * The equality keys the tray's storage queries by. FerretDB on PostgreSQL serves only top-level
 * equality from an index (docs/storage.md), so every hot query selects by one of these fields
 * instead of by a range, `$in` or a dotted path. Pure: the stores write and query them.
 */
/** Every recipient's record of one verb and target: what a fan-out reads and a post regroups. */
export function recordGroup(verb: string, targetId: string): string {
  // JSON keeps the parts apart whatever characters the ids contain.
  return JSON.stringify([verb, targetId]);
}

/** The UTC day (YYYY-MM-DD) of a time. */
export function dayOf(at: Date | number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** The keys of a tray record derived from its fields. */
export function recordStorageKeys(record: { verb: string; targetId: string }): { group: string } {
  return { group: recordGroup(record.verb, record.targetId) };
}

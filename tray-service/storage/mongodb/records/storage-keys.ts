/**
 * Keys the MongoDB adapter stores beside the fields they are derived from, so one indexed
 * equality finds what a write or a late join needs. Pure: the stores write and query them.
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

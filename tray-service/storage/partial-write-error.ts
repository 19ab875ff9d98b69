/**
 * A write of several records that failed after it had changed some. MongoDB's adapter writes
 * records one compare-and-set at a time, so a mark of many can stop part-way (a record held by a
 * writer that died, the connection lost) with the first records changed for good; PostgreSQL
 * writes them in one statement and never throws this. `changed` holds what the write would have
 * returned for those; `cause` is the failure, which is the call's.
 */
export class PartialWriteError<T> extends Error {
  readonly changed: readonly T[];

  constructor(changed: readonly T[], cause: unknown) {
    super(`the write failed after it changed ${changed.length} records`, { cause });
    this.name = 'PartialWriteError';
    this.changed = changed;
  }
}

/**
 * Runs `write`, which pushes each record it changes into `changed` as it goes, and returns them; a
 * failure after some were changed is thrown as a PartialWriteError carrying them.
 */
export async function collectChanged<T>(changed: T[], write: () => Promise<unknown>): Promise<T[]> {
  try {
    await write();
  } catch (error) {
    if (changed.length > 0) throw new PartialWriteError(changed, error);
    throw error;
  }
  return changed;
}

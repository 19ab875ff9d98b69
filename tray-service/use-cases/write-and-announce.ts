import { PartialWriteError } from '../storage/port.ts';

/**
 * Runs a write of several records, announces what it changed to the user's open streams, and
 * answers it. When the write fails part-way (PartialWriteError), the records it did change are
 * announced all the same, so the streams do not go on showing them as they were, and the call then
 * fails with the write's own failure (the client's retry changes the rest; each mark is
 * idempotent). Nothing changed: nothing announced.
 */
export async function writeAndAnnounce<T>(
  write: () => Promise<T[]>,
  announce: (changed: readonly T[]) => Promise<void>,
): Promise<T[]> {
  let changed: T[];
  try {
    changed = await write();
  } catch (error) {
    if (!(error instanceof PartialWriteError)) throw error;
    const partial = error.changed as readonly T[];
    // The announcement is the streams' only news of these records; its own failure is the
    // publisher's to record (lost changes), never the call's.
    if (partial.length > 0) await announce(partial).catch(() => undefined);
    throw error.cause;
  }
  if (changed.length > 0) await announce(changed);
  return changed;
}

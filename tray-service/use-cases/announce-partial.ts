import { PartialWriteError } from '../storage/port.ts';

/**
 * Runs a write of several records and answers what it changed. When it fails part-way
 * (PartialWriteError), the records it did change are announced all the same, so the user's open
 * streams do not go on showing them as they were, and the call then fails with the write's own
 * failure (the client's retry changes the rest; each mark is idempotent).
 */
export async function announcePartial<T>(
  write: () => Promise<T[]>,
  announce: (changed: readonly T[]) => Promise<void>,
): Promise<T[]> {
  try {
    return await write();
  } catch (error) {
    if (!(error instanceof PartialWriteError)) throw error;
    // The announcement is the streams' only news of these records; its own failure is the
    // publisher's to record (lost changes), never the call's.
    await announce(error.changed as readonly T[]).catch(() => undefined);
    throw error.cause;
  }
}

import { PartialWriteError, type TellStored } from '../storage/port.ts';

/**
 * Runs a write of several records, announces what it changed to the user's open streams, and
 * answers it. The write may tell parts as they are stored (`tell`: a large mark in parts, each
 * within a live stream's settle window of its stamp); what it changed and did not tell is announced
 * once it returns. When the write fails part-way (PartialWriteError), the records it did change
 * are announced all the same, so the streams do not go on showing them as they were, and the call
 * then fails with the write's own failure (the client's retry changes the rest; each mark is
 * idempotent). Nothing changed: nothing announced.
 */
export async function writeAndAnnounce<T extends object>(
  write: (tell: TellStored<T>) => Promise<T[]>,
  announce: (changed: readonly T[]) => Promise<void>,
): Promise<T[]> {
  const told = new Set<T>();
  // The announcement is the streams' only news of these records; its own failure is the
  // publisher's to record (lost changes), never the call's, which has changed them already.
  const tellStreams = async (records: readonly T[]) => {
    if (records.length > 0) await announce(records).catch(() => undefined);
  };
  const tell: TellStored<T> = async (part) => {
    for (const record of part) told.add(record);
    await tellStreams(part);
  };
  const untold = (changed: readonly T[]) => changed.filter((record) => !told.has(record));
  let changed: T[];
  try {
    changed = await write(tell);
  } catch (error) {
    if (!(error instanceof PartialWriteError)) throw error;
    await tellStreams(untold(error.changed as readonly T[]));
    throw error.cause;
  }
  await tellStreams(untold(changed));
  return changed;
}

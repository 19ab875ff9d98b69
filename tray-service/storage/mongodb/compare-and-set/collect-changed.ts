import { PartialWriteError } from '../../port.ts';

/**
 * Runs `write`, which pushes each record it changes into `changed` as it goes, and returns them; a
 * failure after some were changed is thrown as a PartialWriteError carrying them, so the caller
 * still announces those (a compare-and-set writes record by record, with no transaction to undo).
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

import { isDuplicateKey, onlyDuplicateKeys, writeErrorsOf } from './is-duplicate-key.ts';

/**
 * Awaits a write whose only expected failure is a duplicate key (an insert that lost a race, a
 * redelivery, or an upsert whose filter found a newer state) and returns the indexes of the
 * documents that were duplicates. Any other error is thrown: bull retries the job.
 */
export async function ignoreDuplicates(write: Promise<unknown>): Promise<number[]> {
  try {
    await write;
    return [];
  } catch (error) {
    const writeErrors = writeErrorsOf(error);
    if (writeErrors.length > 0) {
      // Not with a write concern failure: the surviving writes are not known to be durable.
      if (onlyDuplicateKeys(error)) return writeErrors.map((w) => (w as { index?: number }).index ?? 0);
      throw error;
    }
    if (isDuplicateKey(error)) return [0];
    throw error;
  }
}

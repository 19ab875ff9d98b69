import { isDuplicateKey, onlyDuplicateKeys, writeErrorsOf } from './is-duplicate-key.ts';
import { writeConcernFailureOf } from './write-concern-failure.ts';

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
      // A write concern failure means the surviving writes are not known to be durable.
      if (writeConcernFailureOf(error) === undefined && onlyDuplicateKeys(error))
        return writeErrors.map((w) => (w as { index?: number }).index ?? 0);
      throw error;
    }
    if (isDuplicateKey(error)) return [0];
    throw error;
  }
}

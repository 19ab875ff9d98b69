import { MongoBulkWriteError, MongoServerError } from 'mongodb';

const DUPLICATE_KEY = 11000;

/**
 * Awaits a write whose only expected failure is a duplicate key (an insert that lost a race or a
 * redelivery), and returns the indexes of the documents that were duplicates. Any other error,
 * or a write concern error, is thrown: bull retries the job.
 */
export async function ignoreDuplicates(write: Promise<unknown>): Promise<number[]> {
  try {
    await write;
    return [];
  } catch (error) {
    if (error instanceof MongoBulkWriteError) {
      const writeErrors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
      if (error.err || writeErrors.length === 0 || writeErrors.some((w) => w.code !== DUPLICATE_KEY))
        throw error;
      return writeErrors.map((w) => w.index);
    }
    if (error instanceof MongoServerError && error.code === DUPLICATE_KEY) return [0];
    throw error;
  }
}

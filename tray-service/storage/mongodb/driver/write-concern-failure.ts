import { MongoBulkWriteError, MongoWriteConcernError } from 'mongodb';

/**
 * The write concern failure an error of a write carries, if any: the documents that went in are
 * then not known to be durable (no majority confirmed them in time, or a primary stepped down).
 * A single write's is a MongoWriteConcernError. A bulk write's (insertMany, bulkWrite) is on the
 * error's `err` when it was the write's only failure, and only in its result when some documents
 * failed too (the driver then reports their errors first: a duplicate key, say).
 */
export function writeConcernFailureOf(error: unknown): { code?: unknown } | undefined {
  if (error instanceof MongoWriteConcernError) return error.result.writeConcernError;
  if (!(error instanceof MongoBulkWriteError)) return undefined;
  return error.err ?? error.result?.getWriteConcernError() ?? undefined;
}

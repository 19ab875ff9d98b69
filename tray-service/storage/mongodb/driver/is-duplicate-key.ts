import { writeConcernFailureOf } from './write-concern-failure.ts';

/** The server's code for a write that breaks a unique index (MongoDB and FerretDB alike). */
export const DUPLICATE_KEY = 11000;

interface WriteErrorLike {
  readonly code?: unknown;
}

/** True for a single write refused because a document with the same unique key exists. */
export function isDuplicateKey(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as WriteErrorLike).code === DUPLICATE_KEY;
}

/**
 * The per-document errors of a failed bulk write (the driver gives one object or a list), or an
 * empty list for any other error.
 */
export function writeErrorsOf(error: unknown): readonly WriteErrorLike[] {
  if (typeof error !== 'object' || error === null) return [];
  const writeErrors = (error as { writeErrors?: unknown }).writeErrors;
  if (Array.isArray(writeErrors)) return writeErrors as WriteErrorLike[];
  return typeof writeErrors === 'object' && writeErrors !== null ? [writeErrors as WriteErrorLike] : [];
}

/**
 * True when a bulk write failed only because some of its documents already existed: the expected
 * loser of an insert race under at-least-once delivery, which leaves the data as the winner wrote it.
 * Not when its write concern failed too: the documents that went in are then not known to be
 * durable (a step-down may roll them back), and the write must be tried again.
 */
export function onlyDuplicateKeys(error: unknown): boolean {
  const writeErrors = writeErrorsOf(error);
  return (
    writeErrors.length > 0 && writeErrors.every(isDuplicateKey) && writeConcernFailureOf(error) === undefined
  );
}

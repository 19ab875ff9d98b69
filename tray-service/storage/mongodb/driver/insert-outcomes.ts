import { isDuplicateKey, writeErrorsOf } from './is-duplicate-key.ts';
import { writeConcernFailureOf } from './write-concern-failure.ts';

/** What became of one document of an unordered insert. */
export type InsertOutcome = 'inserted' | 'duplicate' | { readonly refused: WriteErrorOf };

/** One document's error as the driver reports it. */
export interface WriteErrorOf {
  readonly code?: unknown;
  readonly index?: number;
  readonly errmsg?: unknown;
}

/**
 * Awaits an unordered insert of `count` documents and tells what became of each: inserted, a
 * duplicate key (a redelivery, or a concurrent writer's first), or refused by the server for its
 * data while the others went in. Anything else is thrown: a failure before the server saw the
 * documents (the driver's own checks, the network) or a write concern error (the documents that
 * went in are not known to be durable).
 */
export async function insertOutcomes(write: Promise<unknown>, count: number): Promise<InsertOutcome[]> {
  const outcomes: InsertOutcome[] = Array.from({ length: count }, () => 'inserted');
  try {
    await write;
    return outcomes;
  } catch (error) {
    const writeErrors = writeErrorsOf(error) as readonly WriteErrorOf[];
    if (writeErrors.length === 0 || writeConcernFailureOf(error) !== undefined) throw error;
    for (const writeError of writeErrors)
      outcomes[writeError.index ?? 0] = isDuplicateKey(writeError) ? 'duplicate' : { refused: writeError };
    return outcomes;
  }
}

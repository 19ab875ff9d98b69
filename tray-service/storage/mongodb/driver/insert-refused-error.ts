/**
 * A document the server refused for a reason of its own (its data, not a duplicate key) in an
 * unordered insert whose other documents went in: the error of that document's caller alone.
 */
export class InsertRefusedError extends Error {
  override readonly name = 'InsertRefusedError';
  /** The server's code for the refusal (e.g. 53 for an `_id` no document may have). */
  readonly code: unknown;

  constructor(collection: string, writeError: { readonly code?: unknown; readonly errmsg?: unknown }) {
    super(`${collection}: the server refused a document: ${String(writeError.errmsg ?? 'no reason given')}`);
    this.code = writeError.code;
  }
}

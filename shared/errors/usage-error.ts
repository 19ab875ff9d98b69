/** A mistake of the operator's (bad flag, missing file): printed as one line, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
  readonly code = 'USAGE';
}

/** Thrown when an operation does not settle within its budget. */
export class TimeoutError extends Error {
  /** Stable across releases: logs and alerts match on it (a subclass names its own kind). */
  readonly code: string = 'TIMEOUT';
  readonly ms: number;

  constructor(ms: number, message = `timed out after ${ms} ms`) {
    super(message);
    this.name = 'TimeoutError';
    this.ms = ms;
  }
}

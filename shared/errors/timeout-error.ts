/** Thrown when an operation does not settle within its budget. */
export class TimeoutError extends Error {
  readonly ms: number;

  constructor(ms: number, message = `timed out after ${ms} ms`) {
    super(message);
    this.name = 'TimeoutError';
    this.ms = ms;
  }
}

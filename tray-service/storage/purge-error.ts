/** A table (a collection) whose expired rows a purge could not delete, and why. */
export interface PurgeFailure {
  readonly table: string;
  readonly error: Error;
}

/**
 * A purge that went on past its failures: every other table was purged, `purged` counts what
 * went, and each table that failed is named with its error, for the worker to log once each. One
 * table the purge cannot finish (a batch cancelled by the statement timeout) never leaves the
 * others to grow.
 */
export class PurgeError extends AggregateError {
  readonly failures: readonly PurgeFailure[];
  readonly purged: { records: number; events: number };

  constructor(failures: readonly PurgeFailure[], purged: { records: number; events: number }) {
    super(
      failures.map((failure) => failure.error),
      `purge failed on ${failures.map(({ table, error }) => `${table}: ${error.message}`).join(', ')}; every other table was purged`,
    );
    this.name = 'PurgeError';
    this.failures = failures;
    this.purged = purged;
  }
}

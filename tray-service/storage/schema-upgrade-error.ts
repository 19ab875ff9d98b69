/**
 * A step bringing the schema up to date failed (a PostgreSQL migration). `retryable` is the
 * adapter's reading of the cause: the connection was lost or the server was short of resources
 * (start-up tries again), or anything else: a statement the server refuses (a privilege the role
 * lacks, a constraint the data breaks), which every try meets again, so start-up stops at once and
 * says so rather than waiting up to TRAY_STARTUP_WAIT_MS for a database that does answer.
 */
export class SchemaUpgradeError extends Error {
  readonly code = 'SCHEMA_UPGRADE_FAILED';
  readonly retryable: boolean;
  constructor(message: string, options: { cause: unknown; retryable: boolean }) {
    super(message, { cause: options.cause });
    this.name = 'SchemaUpgradeError';
    this.retryable = options.retryable;
  }
}

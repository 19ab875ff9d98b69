/**
 * A storage opened read-only (an export with a read-only database role, or against a replica)
 * whose schema an older version of the kit left: this version's reads may need what its
 * upgrades add, and a read-only open never applies them. Starting this version's tray service
 * once brings the schema up to date.
 */
export class SchemaBehindError extends Error {
  readonly code = 'SCHEMA_BEHIND';
  constructor(found: string, needed: string) {
    super(
      `the database's tray schema is ${found}, this version needs ${needed}: start this version's tray service once (it brings the schema up to date), or use the version the database matches`,
    );
    this.name = 'SchemaBehindError';
  }
}

import type { Document } from 'mongodb';

/** Command shapes the test server cannot run (see commandViolations). */
export interface CommandGuardLimits {
  /** Most single-document (`multi: false`) updates in one `update` command (FerretDB hangs at 50). */
  maxSingleUpdates: number;
}

export const defaultCommandGuardLimits: CommandGuardLimits = { maxSingleUpdates: 40 };

/** `updates`: an array, or (sent as an OP_MSG document sequence) an object holding one. */
function statements(value: unknown): Document[] {
  if (Array.isArray(value)) return value as Document[];
  const documents = (value as { documents?: unknown } | undefined)?.documents;
  return Array.isArray(documents) ? (documents as Document[]) : [];
}

/**
 * What is wrong with one command sent to the server, as sentences (none when it is fine): an
 * `update` command (a bulkWrite) with more than `maxSingleUpdates` single-document updates.
 * FerretDB 1.24 on PostgreSQL hangs until restart on a bulk of 50 matching `updateOne`s (each
 * holds a connection of its pool of 50), so the adapter sends single-document `updateMany`s.
 */
export function commandViolations(
  commandName: string,
  command: Document,
  limits: CommandGuardLimits = defaultCommandGuardLimits,
): string[] {
  if (commandName !== 'update') return [];
  const single = statements(command.updates).filter((statement) => !statement.multi).length;
  return single > limits.maxSingleUpdates
    ? [
        `update on ${String(command.update)} with ${single} single-document updates in one command (limit ${limits.maxSingleUpdates})`,
      ]
    : [];
}

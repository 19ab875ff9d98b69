import type { Document } from 'mongodb';

/** Command shapes FerretDB cannot serve at volume (see commandViolations). */
export interface CommandGuardLimits {
  /** Most values one `$in` / `$nin` may list (FerretDB never pushes `$in` down: it scans). */
  maxInValues: number;
  /** Most single-document (`multi: false`) updates in one `update` command (FerretDB hangs at 50). */
  maxSingleUpdates: number;
}

export const defaultCommandGuardLimits: CommandGuardLimits = { maxInValues: 10, maxSingleUpdates: 40 };

/** The filters a command carries, by command name. */
function filtersOf(commandName: string, command: Document): unknown[] {
  switch (commandName) {
    case 'find':
      return [command.filter];
    case 'count':
      return [command.query];
    case 'update':
      return statements(command.updates).map((statement) => statement.q);
    case 'delete':
      return statements(command.deletes).map((statement) => statement.q);
    default:
      return [];
  }
}

/** `updates` / `deletes`: an array, or (sent as an OP_MSG document sequence) an object holding one. */
function statements(value: unknown): Document[] {
  if (Array.isArray(value)) return value as Document[];
  const documents = (value as { documents?: unknown } | undefined)?.documents;
  return Array.isArray(documents) ? (documents as Document[]) : [];
}

/** The longest `$in` / `$nin` list anywhere in a filter (inside `$and`, `$or`, `$elemMatch` too). */
function longestInList(value: unknown): number {
  if (Array.isArray(value)) return Math.max(0, ...value.map(longestInList));
  if (!value || typeof value !== 'object' || value instanceof Date) return 0;
  let longest = 0;
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    if ((key === '$in' || key === '$nin') && Array.isArray(inner)) longest = Math.max(longest, inner.length);
    else longest = Math.max(longest, longestInList(inner));
  }
  return longest;
}

/**
 * What is wrong with one command sent to the server, as sentences (none when it is fine): a
 * `find` / `count` / `update` / `delete` filter with a `$in` or `$nin` over more than
 * `maxInValues` values, or an `update` command (a bulkWrite) with more than `maxSingleUpdates`
 * single-document updates.
 */
export function commandViolations(
  commandName: string,
  command: Document,
  limits: CommandGuardLimits = defaultCommandGuardLimits,
): string[] {
  const found: string[] = [];
  const longest = Math.max(0, ...filtersOf(commandName, command).map(longestInList));
  if (longest > limits.maxInValues) {
    found.push(
      `${commandName} on ${String(command[commandName])} with a $in/$nin of ${longest} values (limit ${limits.maxInValues})`,
    );
  }
  if (commandName === 'update') {
    const single = statements(command.updates).filter((statement) => !statement.multi).length;
    if (single > limits.maxSingleUpdates) {
      found.push(
        `update on ${String(command.update)} with ${single} single-document updates in one command (limit ${limits.maxSingleUpdates})`,
      );
    }
  }
  return found;
}

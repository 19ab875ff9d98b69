import type { Collection, Document, IndexDescription } from 'mongodb';

/**
 * createIndexes for the indexes the collection does not have yet (by name). FerretDB 1.24 panics
 * and drops the connection when createIndexes is sent compound indexes that already exist, which
 * crashed every tray-service start after the first (found by the reliability suite, issue 8).
 * Two processes starting at once may both create a missing index; the server keeps one.
 */
export async function createMissingIndexes<T extends Document>(
  collection: Collection<T>,
  indexes: readonly (IndexDescription & { name: string })[],
): Promise<void> {
  const existing = new Set(
    (
      await collection
        .listIndexes()
        .toArray()
        .catch(() => [])
    ).map((index: { name?: string }) => index.name),
  );
  const missing = indexes.filter((index) => !existing.has(index.name));
  if (missing.length > 0) await collection.createIndexes(missing);
}

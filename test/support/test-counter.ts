import type { Db } from 'mongodb';
import { createCounter, type Counter } from '../../tray-service/storage/mongodb/create-counter.ts';
import { detectStorage } from '../../tray-service/storage/mongodb/detect-storage.ts';
import { testStack } from './test-stack.ts';

const counters = new Map<Db, Promise<Counter>>();

/**
 * The counter tray-service/main.ts builds, for `db` on the test stack (on FerretDB on PostgreSQL
 * the counts run in PostgreSQL), one per database; closed with the stack.
 */
export function testCounter(db: Db): Promise<Counter> {
  let counter = counters.get(db);
  if (!counter) {
    counter = detectStorage(db).then((storage) =>
      createCounter(db, { storage, postgresUrl: testStack().postgresUrl }),
    );
    counters.set(db, counter);
  }
  return counter;
}

export async function closeTestCounters(): Promise<void> {
  const open = [...counters.values()];
  counters.clear();
  for (const counter of open) await (await counter).close();
}

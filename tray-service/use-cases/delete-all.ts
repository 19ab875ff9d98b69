import type { TrayStorage } from '../storage/port.ts';
import type { TrayChanges } from './tray-changes.ts';

/**
 * v3/delete-all: the user's whole tray deleted, and the time of it kept, so a stream that
 * reconnects later is told its client must clear too (docs/live-tray.md). Returns how many
 * records went.
 */
export async function deleteAll(
  storage: Pick<TrayStorage, 'records' | 'clears'>,
  changes: Pick<TrayChanges, 'cleared'> | undefined,
  userId: string,
  now: number,
): Promise<number> {
  const deleted = await storage.records.deleteAll(userId);
  // The records are gone whether or not their time is stored: open streams are told either way
  // (a failure leaves the call to be tried again, which stores the time).
  try {
    await storage.clears.record(userId, now);
  } finally {
    await changes?.cleared(userId, now);
  }
  return deleted;
}

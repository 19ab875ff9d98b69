import type { Db } from 'mongodb';
import type { BansPort } from '../port.ts';
import { applyBanChanges, storedBanChanges } from './ban-store.ts';

/** The storage port's global bans on MongoDB: insert-only change documents (ban-store.ts). */
export function createMongoBans(db: Db): BansPort {
  return {
    apply: (changes) => applyBanChanges(db, changes),
    all: () => storedBanChanges(db),
  };
}

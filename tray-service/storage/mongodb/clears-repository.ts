import type { Db } from 'mongodb';
import { createLatestTimes } from './latest-times.ts';

export const TRAY_CLEARS = 'tray_clears';

/** When a user last deleted their whole tray (v3/delete-all): what a reconnecting stream is told. */
export interface ClearDoc {
  userId: string;
  clearedAt: number;
}

export interface ClearsRepository {
  /** 0 when the user never cleared their tray. */
  lastClearedAt(userId: string): Promise<number>;
  markCleared(userId: string, at: number): Promise<void>;
}

/** Kept by insert and prune, like the last-read time (createLatestTimes). */
export function createClearsRepository(db: Db): ClearsRepository {
  const times = createLatestTimes(db, TRAY_CLEARS, 'clearedAt' satisfies keyof ClearDoc);
  return { lastClearedAt: times.latest, markCleared: times.record };
}

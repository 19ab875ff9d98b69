import type { Db } from 'mongodb';
import { createLatestTimes } from './latest-times.ts';

export const TRAY_READ_STATE = 'tray_read_state';

/**
 * The "Last Read" level (docs/contract.md#what-unread-compares): the user's latest last-read time,
 * kept by insert and prune (createLatestTimes).
 */
export interface ReadStateDoc {
  userId: string;
  /** Epoch ms; records updated after it (and not marked read) count as unread. */
  lastReadAt: number;
}

export interface ReadStateRepository {
  /** 0 when the user never called last-read: every unread record counts. */
  lastReadAt(userId: string): Promise<number>;
  markLastRead(userId: string, at: number): Promise<void>;
}

export function createReadStateRepository(db: Db): ReadStateRepository {
  const times = createLatestTimes(db, TRAY_READ_STATE, 'lastReadAt' satisfies keyof ReadStateDoc);
  return { lastReadAt: times.latest, markLastRead: times.record };
}

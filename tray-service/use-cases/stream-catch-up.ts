import type { InboxRecord } from '../domain/inbox-record.ts';
import type { TrayStorage } from '../storage/port.ts';

export interface CatchUp {
  /** Unexpired records changed after `since`, oldest change first, with their inbox state. */
  changed: InboxRecord[];
  /** When the user last deleted their whole tray; 0 when never. */
  clearedAt: number;
}

/** What a reconnecting live stream missed since `since` (docs/live-tray.md). */
export async function streamCatchUp(
  storage: Pick<TrayStorage, 'records' | 'clears'>,
  userId: string,
  since: number,
  now: number,
): Promise<CatchUp> {
  const [changed, clearedAt] = await Promise.all([
    storage.records.changedSince(userId, since, now),
    storage.clears.latest(userId),
  ]);
  return { changed, clearedAt };
}

import type { InboxRecord } from '../../../../tray-service/domain/inbox-record.ts';
import type { TrayStorage } from '../../../../tray-service/storage/port.ts';
import { seedActivities } from '../../../support/seed-tray.ts';

/**
 * Writes `userId`'s record of `targetId` at `at`, as the worker applies an activity, and answers
 * the records the write told (what the worker announces to live streams).
 */
export async function writeRecord(
  storage: TrayStorage,
  userId: string,
  targetId: string,
  at: number,
): Promise<InboxRecord[]> {
  let written: InboxRecord[] = [];
  await storage.writes.applyPersonal(seedActivities({ userId, targetId, lastUpdate: at }), {
    now: at,
    retentionDays: 90,
    onWritten: async (records) => {
      written = [...records];
    },
  });
  return written;
}

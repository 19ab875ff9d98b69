import request from 'supertest';
import type { TrayStorage } from '../../../../tray-service/storage/port.ts';
import { seedActivities } from '../../../support/seed-tray.ts';
import { bearer } from '../../api/support/api-harness.ts';
import { named, openSse } from './sse-client.ts';

/**
 * `count` records of `userId`, then a stream opened and closed (the app going away with its id),
 * then every record marked read while it is away: one change time for them all, a catch-up of
 * `count` records owed to the next stream that resumes from the id answered.
 */
export async function markedWhileAway(
  storage: TrayStorage,
  base: string,
  userId: string,
  count: number,
): Promise<string> {
  const now = Date.now();
  const activities = Array.from({ length: count }, (_, i) =>
    seedActivities({ userId, targetId: `p-${i}`, lastUpdate: now - 100_000 - i }),
  ).flat();
  await storage.writes.applyPersonal(activities, { now: now - 100_000, retentionDays: 90 });
  const first = await openSse(`${base}/notifications/v3/stream`, { Authorization: await bearer(userId) });
  const away = (await first.next(named('unread'))).id ?? '';
  first.close();
  await request(base)
    .get('/notifications/v3/mark-all-as-read')
    .set('Authorization', await bearer(userId))
    .expect(200);
  return away;
}

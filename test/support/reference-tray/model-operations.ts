import { DAY_MS } from '../../../shared/time/durations.ts';
import type { Activity } from '../../../tray-service/domain/activity.ts';
import type { TrayOperation } from './reference-tray.ts';

/** The unit tests of the reference tray: the platform time of their actions, and the tray's clock. */
export const T = Date.UTC(2026, 10, 20, 10);
export const NOW = T + DAY_MS;
export const RETENTION = { retentionDays: 90 };
export const POST = { postId: 'p-1', owner: 'u-ana' };

/** Operations of the reference tray as the unit tests write them (community `c-hike`). */
export const personal = (activities: Activity[], now = NOW): TrayOperation => ({
  kind: 'personal',
  activities,
  now,
});
export const posts = (list: Activity[], now = NOW): TrayOperation => ({
  kind: 'posts',
  communityId: 'c-hike',
  posts: list,
  now,
});
export const join = (userId: string, at: number, now = NOW): TrayOperation => ({
  kind: 'membership',
  changes: [{ communityId: 'c-hike', userId, active: true, at }],
  now,
});
export const leave = (userId: string, at: number, now = NOW): TrayOperation => ({
  kind: 'membership',
  changes: [{ communityId: 'c-hike', userId, active: false, at }],
  now,
});

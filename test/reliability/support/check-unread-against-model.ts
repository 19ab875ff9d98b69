import { setTimeout as sleep } from 'node:timers/promises';
import { trayBanShape } from '../../../shared/config/tray-ban-config.ts';
import type { BurstBody } from './burst.ts';
import { bannedUsers, referenceTray, type ModelEnvelope } from './reference-tray-model.ts';
import { trayToken } from './tray-process.ts';

export interface UnreadMismatch {
  readonly userId: string;
  readonly expected: number | string;
  readonly actual: number | string;
}

/**
 * The tray counts as each user sees them: `GET /notifications/v3` (totalUnreadCount, platform
 * document 4.1) of a running tray-service process, one call per user the model expects records
 * for. Nobody read anything or set a last-read time, so every record of the model is unread. A
 * user globally banned at the end (by createdAt) is refused instead: 401, records kept. Called once
 * the queue is empty: a ban job run last (a stalled job recovered at the end) may have been
 * published just now, and the API sees it within BAN_REFRESH_MS, so the calls wait that long first.
 */
export async function checkUnreadAgainstModel(
  trayPort: number,
  events: readonly BurstBody[],
): Promise<{ users: number; mismatches: readonly UnreadMismatch[] }> {
  const envelopes = events.map((event) => JSON.parse(event.body) as ModelEnvelope);
  const expected = new Map<string, number | string>();
  for (const record of referenceTray(envelopes).values()) {
    if (!record.hasRead) expected.set(record.userId, Number(expected.get(record.userId) ?? 0) + 1);
  }
  for (const userId of bannedUsers(envelopes)) expected.set(userId, 'HTTP 401');
  // The processes run with the default refresh, which starts each one after the last ended: a ban
  // stored last is seen within one refresh and its Redis round trips, later on a loaded machine.
  // A user still differing is asked again until a few refreshes have passed.
  const refreshMs = trayBanShape.BAN_REFRESH_MS.parse(undefined);
  await sleep(refreshMs * 1.25);
  const settleBy = Date.now() + refreshMs * 10;
  const mismatches: UnreadMismatch[] = [];
  for (const [userId, count] of expected) {
    const token = await trayToken(userId, '10m');
    for (;;) {
      const res = await fetch(`http://127.0.0.1:${trayPort}/notifications/v3`, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(10_000),
      });
      const body = (await res.json()) as { data?: { totalUnreadCount?: number } };
      const actual = res.status === 200 ? (body.data?.totalUnreadCount ?? 'none') : `HTTP ${res.status}`;
      if (actual === count) break;
      if (Date.now() >= settleBy) {
        mismatches.push({ userId, expected: count, actual });
        break;
      }
      await sleep(100);
    }
  }
  return { users: expected.size, mismatches };
}

import { expect } from 'chai';
import { DAY_MS } from '../../../shared/time/durations.ts';
import type { InboxPort } from '../../../tray-service/storage/port.ts';

/**
 * The user limit against spans the purge keeps past their retention, for an adapter's own test:
 * the state the purge leaves (an expiry moved to a record's) is the engine's to set, which a
 * conformance case cannot. Three brief spans reach a limit of three; once their expiry is moved
 * by `keepFor` (the purge keeping them for a record of the user), a span past their retention
 * starts all the same.
 */
export async function expectKeptSpansLeftOutOfUserLimit(
  mutes: Pick<InboxPort, 'putMute'>,
  keepFor: (userId: string, expiresAt: number) => Promise<void>,
  now: number,
  retentionDays: number,
): Promise<void> {
  const user = 'u-kept-spans';
  const put = (n: number, at: number, until: number | null = null) =>
    mutes.putMute(user, { targetType: 'post', targetId: `p-${n}` }, until, at, retentionDays, 1_000, 100, 3);
  for (const n of [1, 2, 3]) expect(await put(n, now + n, now + n + 1)).to.include({ createdAt: now + n });
  expect(await put(4, now + 10)).to.equal('too many user spans');
  await keepFor(user, now + 10 * retentionDays * DAY_MS);
  const later = now + 4 + retentionDays * DAY_MS + 1;
  expect(await put(4, later)).to.include({ createdAt: later, until: null });
}

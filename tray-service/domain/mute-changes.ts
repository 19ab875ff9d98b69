import { muteInForceAt, type Mute, type MuteTargetType } from './mute.ts';

export interface MuteTarget {
  targetType: MuteTargetType;
  targetId: string;
}

const sameTarget = (mute: MuteTarget, target: MuteTarget) =>
  mute.targetType === target.targetType && mute.targetId === target.targetId;

/** The owner's mute of this target in force at `now`, if any. Pure. */
export function muteInForce<M extends Mute>(
  mutes: readonly M[],
  target: MuteTarget,
  now: number,
): M | undefined {
  return mutes.find((mute) => sameTarget(mute, target) && muteInForceAt(mute, now));
}

/**
 * When a PUT or DELETE of the target asked at `now` takes effect: never before the latest start or
 * removal of the target's spans. A request's time is read before it waits for the user's lock (a
 * busy pool, another instance's clock): acting at an earlier time than the change before it, a PUT
 * found no span in force and started a second, and a DELETE ended none, as no order of the two
 * requests would. Pure.
 */
export function muteChangeTime(mutes: readonly Mute[], target: MuteTarget, now: number): number {
  let at = now;
  for (const mute of mutes)
    if (sameTarget(mute, target)) at = Math.max(at, mute.createdAt, mute.removedAt ?? mute.createdAt);
  return at;
}

/**
 * PUT mutes at `requestedAt` (muteChangeTime): a mute of the target in force gets the new `until` (its start stays, so what
 * it held back stays held back); otherwise a new span starts now. A span that ended earlier is
 * never stretched over the time it was not in force. Pure: returns the new list.
 */
export function putMute(
  mutes: readonly Mute[],
  owner: string,
  target: MuteTarget,
  until: number | null,
  requestedAt: number,
): Mute[] {
  const now = muteChangeTime(mutes, target, requestedAt);
  const current = muteInForce(mutes, target, now);
  if (current) return mutes.map((mute) => (mute === current ? { ...mute, until } : mute));
  return [...mutes, { userId: owner, ...target, createdAt: now, until, removedAt: null }];
}

/**
 * DELETE mutes at `requestedAt` (muteChangeTime): the span in force ends then and is kept (late deliveries dated inside it
 * stay held back). `removed` is false when no mute of the target was in force. Pure.
 */
export function removeMute(
  mutes: readonly Mute[],
  target: MuteTarget,
  requestedAt: number,
): { mutes: Mute[]; removed: boolean } {
  const now = muteChangeTime(mutes, target, requestedAt);
  const current = muteInForce(mutes, target, now);
  if (!current) return { mutes: [...mutes], removed: false };
  return {
    mutes: mutes.map((mute) => (mute === current ? { ...mute, removedAt: now } : mute)),
    removed: true,
  };
}

/**
 * The latest end a mute may have: the last millisecond an ISO 8601 time with a four-digit year
 * writes. Much later, a span's end plus its retention is no time at all (JavaScript's Date ends at
 * 8,640,000,000,000,000 ms), and such a mute could neither be written back nor kept.
 */
export const LATEST_MUTE_UNTIL = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** Why `until` cannot end a mute put at `now`, or undefined when it can (absent: until removed). Pure. */
export function muteUntilProblem(until: number | null, now: number): string | undefined {
  if (until === null) return undefined;
  if (!Number.isSafeInteger(until)) return 'until: expected an integer time (ms) or an ISO 8601 string';
  if (until > LATEST_MUTE_UNTIL)
    return `until: expected a time no later than ${new Date(LATEST_MUTE_UNTIL).toISOString()}`;
  return until > now ? undefined : 'until: expected a time later than now';
}

import type { Activity } from './activity.ts';
import { activityPost } from './activity-post.ts';

/** What a user can mute (docs/tray-rules.md#inbox). */
export const muteTargetTypes = ['post', 'community', 'user'] as const;
export type MuteTargetType = (typeof muteTargetTypes)[number];

/** At most this many mutes in force per user; removed and expired ones do not count. */
export const MAX_MUTES_IN_FORCE = 1000;

/**
 * At most this many spans per user and target in force or ended within the records' retention
 * (countsTowardSpanLimit): every delivery to the target reads the spans stored, so a user muting
 * and unmuting one target in a loop would slow every delivery to it.
 */
export const MAX_MUTE_SPANS_PER_TARGET = 100;

/**
 * At most this many spans per user, of any targets, in force or ended within the records'
 * retention (countsTowardSpanLimit): an ended span stays stored while a record of its user counts
 * from before its end, and every delivery to the user, every list of their mutes and every PUT
 * reads their spans, so muting new targets for a moment in a loop would grow them without bound.
 * About a hundred new spans a day over a 90-day retention.
 */
export const MAX_MUTE_SPANS_PER_USER = 10_000;

/**
 * One span of one mute of one user, judged by time like membership: in force from `createdAt`
 * (the tray's clock when it was put) until `until` passes or it is removed. Removed and expired
 * spans are kept for the records' retention, so a late delivery dated inside one stays held back.
 */
export interface Mute {
  userId: string;
  targetType: MuteTargetType;
  targetId: string;
  createdAt: number;
  /** When it ends by itself, or null. */
  until: number | null;
  /** When it was removed, or null. */
  removedAt: number | null;
}

/** Whether the mute is in force at `at` (epoch ms). Pure. */
export function muteInForceAt(mute: Pick<Mute, 'createdAt' | 'until' | 'removedAt'>, at: number): boolean {
  return (
    mute.createdAt <= at &&
    (mute.until === null || at < mute.until) &&
    (mute.removedAt === null || at < mute.removedAt)
  );
}

type MutedFields = Pick<
  Activity,
  'verb' | 'targetId' | 'parentTargetId' | 'lastActionId' | 'mentionIn' | 'communityId' | 'actor'
>;

/**
 * Whether the mute covers the activity for its owner: a `post` mute the post and everything on it,
 * a `community` mute the community's posts and everything on them, a `user` mute every activity of
 * that actor. A mention of the owner passes post and community mutes (a direct @mention is never
 * silenced by a thread or group mute); a user mute silences the actor's mentions too. Pure.
 */
export function muteCovers(mute: Pick<Mute, 'targetType' | 'targetId'>, activity: MutedFields): boolean {
  switch (mute.targetType) {
    case 'user':
      return activity.actor.userId === mute.targetId;
    case 'post':
      return activity.verb !== 'mention' && activityPost(activity) === mute.targetId;
    case 'community':
      return activity.verb !== 'mention' && activity.communityId === mute.targetId;
  }
}

/**
 * The targets a mute of which could cover the activity (muteCovers): its actor, its post and its
 * community. A store reads an owner's spans on these, then judges them with heldBackByMutes. Pure.
 */
export function muteTargetsCovering(
  activity: MutedFields,
): { targetType: MuteTargetType; targetId: string }[] {
  const post = activityPost(activity);
  return [
    { targetType: 'user', targetId: activity.actor.userId },
    ...(post === undefined ? [] : [{ targetType: 'post' as const, targetId: post }]),
    ...(activity.communityId === undefined
      ? []
      : [{ targetType: 'community' as const, targetId: activity.communityId }]),
  ];
}

/** Whether one of the owner's mutes held the activity back: covering it and in force at its time. Pure. */
export function heldBackByMutes(
  mutes: Iterable<Pick<Mute, 'targetType' | 'targetId' | 'createdAt' | 'until' | 'removedAt'>>,
  activity: MutedFields & Pick<Activity, 'at'>,
): boolean {
  for (const mute of mutes) if (muteCovers(mute, activity) && muteInForceAt(mute, activity.at)) return true;
  return false;
}

/** When the span ended: its `until` or its removal, whichever came first; Infinity while neither. */
export function muteEnd(mute: Pick<Mute, 'until' | 'removedAt'>): number {
  return Math.min(mute.until ?? Infinity, mute.removedAt ?? Infinity);
}

/**
 * Whether a span counts toward MAX_MUTE_SPANS_PER_TARGET at `now` (epoch ms): one that has not
 * ended, or ended less than `keepMs` (the records' retention) ago. An older one may stay stored
 * while a record of its user counts from before its end, but does not count: an active
 * community's `post` record never ends, so counted while stored, 100 daily mutes of one target
 * would refuse it for good. Pure.
 */
export function countsTowardSpanLimit(
  mute: Pick<Mute, 'until' | 'removedAt'>,
  now: number,
  keepMs: number,
): boolean {
  return muteEnd(mute) > now - keepMs;
}

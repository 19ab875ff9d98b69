import type { Activity, MappedEvent } from './activity.ts';
import { heldBackByMutes, muteTargetsCovering, type Mute } from './mute.ts';
import type { MuteTarget } from './mute-changes.ts';
import { compareCodePoints } from './code-point-order.ts';

/**
 * Whose tray records an event changed, from what the mapping made of it (docs/operations.md#events-console-api):
 * the users of its personal activities (post or comment owners, mentioned users), the actor's own
 * left out as the tray leaves it out, so are those whose mute held the activity back (a mention
 * passes a post or community mute) and those it reached in no way (away from the community of its
 * target as the store judged it by the processing order, or deleted); and for a community post, the members it reached, its
 * author and those whose mute held it back left out by the store (membership by the processing
 * order and mutes by time, as the fan-out reads them).
 */
export interface RecipientSources {
  /** Distinct, in byte order. */
  personal: string[];
  /** A community post: `post` is its activity (what a member's mute is judged against). */
  community?: { communityId: string; at: number; authorId: string; post: Activity };
}

/** The targets a mute of which could hold back one of the event's activities (muteTargetsCovering). Pure. */
export function recipientMuteTargets(mapped: Pick<MappedEvent, 'activities'>): MuteTarget[] {
  const targets = new Map<string, MuteTarget>();
  for (const activity of mapped.activities)
    for (const target of muteTargetsCovering(activity))
      targets.set(JSON.stringify([target.targetType, target.targetId]), target);
  return [...targets.values()];
}

/** Mute spans by owner. Pure. */
export function mutesByOwner(spans: readonly Mute[]): Map<string, Mute[]> {
  const byOwner = new Map<string, Mute[]>();
  for (const span of spans) byOwner.set(span.userId, [...(byOwner.get(span.userId) ?? []), span]);
  return byOwner;
}

/**
 * The event's sources; `mutes` (the personal recipients' spans on recipientMuteTargets, by owner)
 * and `missed` (for each of the activities, whether it reached its recipient in no way: away from
 * its community then, or deleted)
 * leave out a personal recipient none of whose activities reached them.
 */
export function recipientSources(
  mapped: Pick<MappedEvent, 'activities'>,
  mutes: ReadonlyMap<string, readonly Mute[]> = new Map(),
  missed: readonly boolean[] = [],
): RecipientSources {
  const personal = new Set<string>();
  let community: RecipientSources['community'];
  for (const [index, activity] of mapped.activities.entries()) {
    const { audience } = activity;
    if (
      audience.kind === 'user' &&
      audience.userId !== activity.actor.userId &&
      missed[index] !== true &&
      !heldBackByMutes(mutes.get(audience.userId) ?? [], activity)
    )
      personal.add(audience.userId);
    if (audience.kind === 'community' && community === undefined)
      community = {
        communityId: audience.communityId,
        at: activity.at,
        authorId: activity.actor.userId,
        post: activity,
      };
  }
  return {
    personal: [...personal].sort(compareCodePoints),
    ...(community ? { community } : {}),
  };
}

/**
 * One page of the union of the personal recipients and a page of members, both in byte order,
 * strictly after `after`. `members` must hold the first `limit` members after `after` (and say
 * whether more follow): every member beyond it sorts after all of it, so the union's first
 * `limit` ids are among the two lists.
 */
export function recipientsPage(
  personal: readonly string[],
  members: { userIds: readonly string[]; more: boolean },
  after: string | undefined,
  limit: number,
): { userIds: string[]; next?: string } {
  const later = (userId: string) => after === undefined || compareCodePoints(userId, after) > 0;
  const union = [...new Set([...personal.filter(later), ...members.userIds])].sort(compareCodePoints);
  const userIds = union.slice(0, limit);
  const last = userIds.at(-1);
  const more = union.length > limit || (members.more && userIds.length === limit);
  return more && last !== undefined ? { userIds, next: last } : { userIds };
}

import type { Activity, MappedEvent } from './activity.ts';
import { heldBackByMutes, muteTargetsCovering, type Mute } from './mute.ts';
import type { MuteTarget } from './mute-changes.ts';
import { compareCodePoints } from './code-point-order.ts';

/**
 * Whose tray records an event changed, from what the mapping made of it (docs/operations.md#events-console-api):
 * the users of its personal activities (post or comment owners, mentioned users), the actor's own
 * left out as the tray leaves it out, so are those whose mute held the activity back (a mention
 * passes a post or community mute), and on a community's target those away from it then left out
 * by the caller (personalIn); and for a community post, the community's members at the
 * post's time, its author and those whose mute held it back left out by the store (membership and
 * mutes by time, as the fan-out reads them).
 */
export interface RecipientSources {
  /** Distinct, in byte order. */
  personal: string[];
  /**
   * The community whose target the personal activities are on, and their time: those of the
   * personal recipients who were away from it then got nothing (the tray held it back).
   */
  personalIn?: { communityId: string; at: number };
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
 * leaves out a personal recipient all of whose activities a mute held back.
 */
export function recipientSources(
  mapped: Pick<MappedEvent, 'activities'>,
  mutes: ReadonlyMap<string, readonly Mute[]> = new Map(),
): RecipientSources {
  const personal = new Set<string>();
  let community: RecipientSources['community'];
  let personalIn: RecipientSources['personalIn'];
  for (const activity of mapped.activities) {
    const { audience } = activity;
    if (audience.kind === 'user' && audience.userId !== activity.actor.userId) {
      if (!heldBackByMutes(mutes.get(audience.userId) ?? [], activity)) personal.add(audience.userId);
      if (activity.communityId !== undefined && personalIn === undefined)
        personalIn = { communityId: activity.communityId, at: activity.at };
    }
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
    ...(personalIn ? { personalIn } : {}),
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

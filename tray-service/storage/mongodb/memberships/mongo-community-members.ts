import type { Db } from 'mongodb';
import type { CommunityMembersPort } from '../../port.ts';
import type { Activity } from '../../../domain/activity.ts';
import { isAwayAt } from '../../../domain/membership-intervals.ts';
import { heldBackByMutes } from '../../../domain/mute.ts';
import { compareCodePoints } from '../../../domain/code-point-order.ts';
import { TRAY_MUTES } from '../collection-names.ts';
import { spansCovering } from '../mutes/muted-deliveries.ts';
import { muteTargetKey, type MuteDoc } from '../mutes/tray-mutes-collection.ts';
import { memberSpans, postRecipients } from './membership-changes.ts';

/** The page of `users` after `after`, in id order. */
function pageOf(users: readonly string[], page: { limit: number; after?: string }) {
  const after = page.after;
  const all = users
    .filter((userId) => after === undefined || compareCodePoints(userId, after) > 0)
    .sort(compareCodePoints);
  const userIds = all.slice(0, page.limit);
  const last = userIds.at(-1);
  return all.length > page.limit && last !== undefined ? { userIds, next: last } : { userIds };
}

/**
 * Who was a member of a community at a time, by the rule a fan-out uses (postRecipients: the
 * community's membership changes and imported members, read by equality on communityId and folded
 * in memory), then paged here in id order.
 */
export function createMongoCommunityMembers(db: Db): CommunityMembersPort {
  const members = async (communityId: string, at: number, exclude: string | undefined) =>
    (await postRecipients(db, communityId, at)).filter((userId) => userId !== exclude);
  /**
   * The members the post reached: the fan-out's reads (the members, then one `$in` of the spans on
   * the post's targets, mute_target) and the domain's judgement of each member's spans.
   */
  const reached = async (communityId: string, post: Activity) => {
    const users = await members(communityId, post.at, post.actor.userId);
    const spans = await spansCovering(db, [post], new Set(users));
    return spans.size === 0
      ? users
      : users.filter((userId) => !heldBackByMutes(spans.get(userId) ?? [], post));
  };
  return {
    membersAt: async (communityId, at, page) => pageOf(await members(communityId, at, page.exclude), page),
    countMembersAt: async (communityId, at, exclude) => (await members(communityId, at, exclude)).length,
    postRecipients: async (communityId, post, page) => pageOf(await reached(communityId, post), page),
    countPostRecipients: async (communityId, post) => (await reached(communityId, post)).length,
    async membersAmong(communityId, at, userIds) {
      if (userIds.length === 0) return new Set();
      const wanted = new Set(userIds);
      return new Set((await members(communityId, at, undefined)).filter((userId) => wanted.has(userId)));
    },
    // The away spans a personal write checks (memberSpans): one read per user, and they are few.
    async awayAmong(communityId, at, userIds) {
      const away = new Set<string>();
      for (const userId of new Set(userIds))
        if (isAwayAt((await memberSpans(db, communityId, userId)).away, at)) away.add(userId);
      return away;
    },
    // One `$in` on mute_target (target, userId).
    async muteSpansOn(userIds, targets) {
      if (userIds.length === 0 || targets.length === 0) return [];
      const keys = targets.map((target) => muteTargetKey(target.targetType, target.targetId));
      return db
        .collection<MuteDoc>(TRAY_MUTES)
        .find(
          { target: { $in: keys }, userId: { $in: [...userIds] } },
          { projection: { _id: 0, target: 0, expiresAt: 0 } },
        )
        .toArray();
    },
  };
}

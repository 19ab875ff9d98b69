import type { Db } from 'mongodb';
import type { CommunityMembersPort } from '../../port.ts';
import type { Activity } from '../../../domain/activity.ts';
import { awayForAction, isAwayAt, memberFor } from '../../../domain/membership-intervals.ts';
import { processedOf } from '../../../domain/kept-activity.ts';
import { keptPlaces } from './target-actions.ts';
import { heldBackByMutes } from '../../../domain/mute.ts';
import { compareCodePoints } from '../../../domain/code-point-order.ts';
import { TRAY_MUTES } from '../collections/collection-names.ts';
import { spansCovering } from '../mutes/muted-deliveries.ts';
import { muteTargetKey, type MuteDoc } from '../collections/tray-mutes-collection.ts';
import { communityMembers, membersSpans } from '../memberships/membership-changes.ts';
import { deletedAmong } from './deleted-users.ts';

/**
 * The page of `users` after `after`, in id order, deleted users left out: only the candidates
 * the page needs are looked up (deletedAmong, `limit` + 1 at a time), not every member.
 */
async function pageOf(db: Db, users: readonly string[], page: { limit: number; after?: string }) {
  const after = page.after;
  const all = users
    .filter((userId) => after === undefined || compareCodePoints(userId, after) > 0)
    .sort(compareCodePoints);
  const kept: string[] = [];
  for (let start = 0; start < all.length && kept.length <= page.limit; start += page.limit + 1) {
    const candidates = all.slice(start, start + page.limit + 1);
    const deleted = await deletedAmong(db, candidates);
    kept.push(...candidates.filter((userId) => !deleted.has(userId)));
  }
  const userIds = kept.slice(0, page.limit);
  const last = userIds.at(-1);
  return kept.length > page.limit && last !== undefined ? { userIds, next: last } : { userIds };
}

/**
 * Whom a community's actions reached, by the rules the writes apply to the same reads: a post's
 * fan-out (the community's changes and imported members, read by equality on communityId, each
 * member judged by memberFor at the post's kept place; deleted members left out, deletedAmong) and
 * a personal write's (the recipients' changes, awayForAction at the action's kept place; a deleted
 * recipient gets nothing). Paged here in id order.
 */
export function createMongoCommunityMembers(db: Db): CommunityMembersPort {
  /**
   * The members the post reached at its kept place, its author left out (deleted ones not yet):
   * of the whole community, or only of `among` (membersSpans: a few read one by one).
   */
  const members = async (communityId: string, post: Activity, among?: ReadonlySet<string>) => {
    const [[kept], candidates] = await Promise.all([
      keptPlaces(db, [post]),
      among === undefined ? communityMembers(db, communityId) : membersSpans(db, communityId, among),
    ]);
    const place = processedOf(kept ?? post);
    return [...candidates]
      .filter(([userId, spans]) => userId !== post.actor.userId && memberFor(spans.edges, post.at, place))
      .map(([userId]) => userId);
  };
  /** `users` but the deleted ones (deletedAmong: an `$in` per 1,000, as a fan-out's batches read them). */
  const withoutDeleted = async (users: readonly string[]) => {
    const deleted = await deletedAmong(db, users);
    return deleted.size === 0 ? users : users.filter((userId) => !deleted.has(userId));
  };
  /**
   * The members the post reached, those whose mute held it back left out: the fan-out's reads
   * (the members, then one `$in` of the spans on the post's targets, mute_target) and the domain's
   * judgement of each member's spans.
   */
  const reached = async (communityId: string, post: Activity) => {
    const users = await members(communityId, post);
    const spans = await spansCovering(db, [post], new Set(users));
    return spans.size === 0
      ? users
      : users.filter((userId) => !heldBackByMutes(spans.get(userId) ?? [], post));
  };
  return {
    reachedAmong: async (communityId, post, userIds) =>
      userIds.length === 0
        ? new Set()
        : new Set(await withoutDeleted(await members(communityId, post, new Set(userIds)))),
    /**
     * The recipients' deleted profiles in one query, their spans per community (membersSpans: a
     * few read one by one, more with the community), and the kept place of only the actions that
     * fall in one of their recipient's away spans (away is a subset of those: a read by `_id` each).
     */
    async notReached(activities) {
      const personal = activities.flatMap((activity, index) =>
        activity.audience.kind === 'user' ? [{ index, userId: activity.audience.userId, activity }] : [],
      );
      const missed = activities.map(() => false);
      if (personal.length === 0) return missed;
      const deleted = await deletedAmong(
        db,
        personal.map(({ userId }) => userId),
      );
      const byCommunity = new Map<string, typeof personal>();
      for (const entry of personal) {
        const { communityId } = entry.activity;
        if (deleted.has(entry.userId)) missed[entry.index] = true;
        else if (communityId !== undefined) {
          const entries = byCommunity.get(communityId);
          if (entries) entries.push(entry);
          else byCommunity.set(communityId, [entry]);
        }
      }
      for (const [communityId, entries] of byCommunity) {
        const spans = await membersSpans(db, communityId, new Set(entries.map(({ userId }) => userId)));
        const inAwaySpan = entries.filter(({ userId, activity }) =>
          isAwayAt(spans.get(userId)?.away ?? [], activity.at),
        );
        const kept = await keptPlaces(
          db,
          inAwaySpan.map(({ activity }) => activity),
        );
        for (const [n, { index, userId }] of inAwaySpan.entries()) {
          const activity = kept[n] as (typeof kept)[number];
          missed[index] = awayForAction(spans.get(userId)?.edges ?? [], activity, processedOf(activity));
        }
      }
      return missed;
    },
    postRecipients: async (communityId, post, page) => pageOf(db, await reached(communityId, post), page),
    countPostRecipients: async (communityId, post) =>
      (await withoutDeleted(await reached(communityId, post))).length,
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

import type { Db } from 'mongodb';
import type { CommunityMembersPort } from '../../port.ts';
import { isAwayAt } from '../../../domain/membership-intervals.ts';
import { memberSpans, postRecipients } from './membership-changes.ts';

/** Byte order, as PostgreSQL's COLLATE "C" sorts ids (the conformance suite compares both). */
const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * Who was a member of a community at a time, by the rule a fan-out uses (postRecipients: the
 * community's membership changes and imported members, read by equality on communityId and folded
 * in memory), then paged here in id order.
 */
export function createMongoCommunityMembers(db: Db): CommunityMembersPort {
  const members = async (communityId: string, at: number, exclude: string | undefined) =>
    (await postRecipients(db, communityId, at)).filter((userId) => userId !== exclude);
  return {
    async membersAt(communityId, at, page) {
      const after = page.after;
      const all = (await members(communityId, at, page.exclude))
        .filter((userId) => after === undefined || byteOrder(userId, after) > 0)
        .sort(byteOrder);
      const userIds = all.slice(0, page.limit);
      const last = userIds.at(-1);
      return all.length > page.limit && last !== undefined ? { userIds, next: last } : { userIds };
    },
    countMembersAt: async (communityId, at, exclude) => (await members(communityId, at, exclude)).length,
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
  };
}

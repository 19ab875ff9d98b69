import { judgeStoredEvent } from '../domain/judged-event.ts';
import {
  mutesByOwner,
  recipientMuteTargets,
  recipientSources,
  recipientsPage,
  type RecipientSources,
} from '../domain/event-recipients.ts';
import { heldBackByMutes, type Mute } from '../domain/mute.ts';
import type { StoredEvent } from '../domain/stored-event.ts';
import type { CommunityMembersPort } from '../storage/port.ts';

export interface RecipientsSummary {
  /** The first users, in id order. */
  users: string[];
  /** How many users in all. */
  total: number;
  /** A community post: whose members at which time it reached. */
  community?: { communityId: string; at: Date };
}

/** The users whose records a stored event changed (domain/event-recipients.ts), read page by page. */
export interface EventRecipients {
  summary(event: StoredEvent, first: number): Promise<RecipientsSummary>;
  page(event: StoredEvent, limit: number, after?: string): Promise<{ userIds: string[]; next?: string }>;
}

interface Sources {
  sources: RecipientSources;
  /** The personal recipients' mute spans on the event's targets, by owner. */
  mutes: ReadonlyMap<string, readonly Mute[]>;
}

export function createEventRecipients(members: CommunityMembersPort): EventRecipients {
  /**
   * The event's sources: its personal recipients whom none of their activities reached (each held
   * back by a mute, the recipient away from its community then, or deleted) left out.
   */
  async function sourcesOf(event: StoredEvent): Promise<Sources> {
    const mapped = judgeStoredEvent(event);
    const candidates = recipientSources(mapped).personal;
    const [spans, missed] = await Promise.all([
      members.muteSpansOn(candidates, recipientMuteTargets(mapped)),
      members.notReached(mapped.activities),
    ]);
    const mutes = mutesByOwner(spans);
    return { sources: recipientSources(mapped, mutes, missed), mutes };
  }

  async function page({ sources }: Sources, limit: number, after?: string) {
    const { community } = sources;
    const found = community
      ? await members.postRecipients(community.communityId, community.post, {
          limit,
          ...(after === undefined ? {} : { after }),
        })
      : { userIds: [] };
    return recipientsPage(
      sources.personal,
      { userIds: found.userIds, more: found.next !== undefined },
      after,
      limit,
    );
  }
  return {
    async summary(event, first) {
      const read = await sourcesOf(event);
      const { sources, mutes } = read;
      const { community } = sources;
      const { userIds } = await page(read, first);
      if (!community) return { users: userIds, total: sources.personal.length };
      const [count, alsoMembers] = await Promise.all([
        members.countPostRecipients(community.communityId, community.post),
        members.reachedAmong(community.communityId, community.post, sources.personal),
      ]);
      // A mentioned member the post reached got two records (the post and the mention) but is one
      // user; one whose mute held the post back is counted by the mention alone.
      const reachedByPost = (userId: string) =>
        alsoMembers.has(userId) && !heldBackByMutes(mutes.get(userId) ?? [], community.post);
      const others = sources.personal.filter((userId) => !reachedByPost(userId));
      return {
        users: userIds,
        total: count + others.length,
        community: { communityId: community.communityId, at: new Date(community.at) },
      };
    },
    page: async (event, limit, after) => page(await sourcesOf(event), limit, after),
  };
}

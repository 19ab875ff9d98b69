import { mapEvent } from '../domain/map-event.ts';
import { recipientSources, recipientsPage, type RecipientSources } from '../domain/event-recipients.ts';
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

export function createEventRecipients(members: CommunityMembersPort): EventRecipients {
  /** The event's sources, its personal recipients who were away from the community left out. */
  async function sourcesOf(event: StoredEvent): Promise<RecipientSources> {
    const sources = recipientSources(
      mapEvent({ event: event.event, data: event.data, receivedAt: event.receivedAt.getTime() }),
    );
    const { personalIn } = sources;
    if (!personalIn) return sources;
    const away = await members.awayAmong(personalIn.communityId, personalIn.at, sources.personal);
    return away.size === 0
      ? sources
      : { ...sources, personal: sources.personal.filter((id) => !away.has(id)) };
  }

  async function page(sources: RecipientSources, limit: number, after?: string) {
    const { community } = sources;
    const found = community
      ? await members.membersAt(community.communityId, community.at, {
          limit,
          exclude: community.authorId,
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
      const sources = await sourcesOf(event);
      const { community } = sources;
      const { userIds } = await page(sources, first);
      if (!community) return { users: userIds, total: sources.personal.length };
      const [count, alsoMembers] = await Promise.all([
        members.countMembersAt(community.communityId, community.at, community.authorId),
        members.membersAmong(community.communityId, community.at, sources.personal),
      ]);
      // A mentioned member got two records (the post and the mention) but is one user.
      const others = sources.personal.filter((userId) => !alsoMembers.has(userId));
      return {
        users: userIds,
        total: count + others.length,
        community: { communityId: community.communityId, at: new Date(community.at) },
      };
    },
    page: async (event, limit, after) => page(await sourcesOf(event), limit, after),
  };
}

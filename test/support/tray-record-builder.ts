import { recordStorageKeys } from '../../shared/tray/storage-keys.ts';
import type { TrayRecordDoc, TrayVerb } from '../../shared/tray/tray-record.ts';

/** Actor names in the order of messages-en.md: the latest actor first. */
export const actorNames = ['Ana', 'Ben', 'Cid', 'Dee', 'Eve', 'Fay', 'Gus', 'Hal'] as const;

export interface TrayRecordSpec {
  verb: TrayVerb;
  feed: 'community' | 'user';
  /** Number of distinct actors (actorsCount); the record stores the latest 3. */
  actors: number;
  mentionIn?: 'post' | 'comment';
  /** Community name, or the feed owner's display name for a user feed. */
  feedName?: string;
  /** Actor names, latest first; defaults to Ana, Ben, Cid, ... */
  names?: readonly string[];
  userId?: string;
}

/**
 * A valid stored record (shared/tray/tray-record.ts) for one message shape, so a test changes one
 * thing. The defaults match the table of messages-en.md: community "Hiking Club", a user feed
 * owned by Ana.
 */
export function buildTrayRecord(spec: TrayRecordSpec): TrayRecordDoc {
  const names = spec.names ?? actorNames;
  const feedName = spec.feedName ?? (spec.feed === 'community' ? 'Hiking Club' : 'Ana');
  const targetId = `target-${spec.verb}`;
  const userId = spec.userId ?? 'reader';
  const now = Date.UTC(2026, 0, 15, 12);
  const stored = Math.min(spec.actors, 3);
  const expiresAt = new Date(now + 90 * 86_400_000);
  const actors = Array.from({ length: stored }, (_, index) => ({
    userId: `user-${index}`,
    name: names[index] ?? `Actor ${index + 1}`,
    at: now - index * 60_000,
  }));
  return {
    _id: `${spec.verb}_${targetId}_${userId}`,
    userId,
    verb: spec.verb,
    targetId,
    targetType: spec.feed === 'community' && spec.verb === 'post' ? 'community' : 'post',
    targetName: feedName,
    lastActionId: `action-${spec.actors}`,
    feed:
      spec.feed === 'community'
        ? { kind: 'community', id: 'community-hiking', name: feedName }
        : { kind: 'user', id: 'user-feed-owner', name: feedName },
    ...(spec.mentionIn ? { mentionIn: spec.mentionIn } : {}),
    actors,
    actorsCount: spec.actors,
    actorIds: actors.map((actor) => actor.userId),
    countFrom: now - spec.actors * 60_000,
    unreadAt: now,
    ...recordStorageKeys({ userId, verb: spec.verb, targetId, lastUpdate: now, expiresAt }, now),
    lastUpdate: now,
    hasRead: false,
    expiresAt,
    version: 1,
  };
}

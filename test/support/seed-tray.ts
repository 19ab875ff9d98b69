import type { Activity, ActorInfo } from '../../tray-service/domain/activity.ts';
import type { FeedRef, TrayRecord, TrayVerb } from '../../tray-service/domain/tray-record.ts';
import type { TrayStorage } from '../../tray-service/storage/port.ts';
import { encodeRecordKey } from '../../tray-service/domain/record-key.ts';
import { actorNames, type TrayRecordSpec } from './tray-record-builder.ts';

/** One record to put in a user's tray, through the storage port as the worker writes it. */
export interface SeedRecord {
  userId: string;
  verb?: TrayVerb;
  targetId?: string;
  /** The newest action's time (the record's lastUpdate). Default: now. */
  lastUpdate?: number;
  /** Actors, newest first; each acts a millisecond before the previous one. Default: Ana. */
  actors?: readonly ActorInfo[];
  feed?: FeedRef;
  targetName?: string;
  targetType?: 'community' | 'post';
  mentionIn?: 'post' | 'comment';
  lastActionId?: string;
  parentTargetId?: string;
  lastActionSegmentNo?: number;
  /** The tray's clock when written: what the unread count compares with last-read. Default: lastUpdate. */
  unreadAt?: number;
  hasRead?: boolean;
  /** Written already expired (retention 0 days). */
  expired?: boolean;
}

export const ANA: ActorInfo = { userId: 'ana', name: 'Ana', imageUrl: 'https://img.example/ana.png' };

/** The activities that make `spec`'s record: one per actor, the newest last. */
export function seedActivities(spec: SeedRecord): Activity[] {
  const verb = spec.verb ?? 'comment';
  const targetId = spec.targetId ?? `post-${Math.random().toString(36).slice(2, 10)}`;
  const lastUpdate = spec.lastUpdate ?? Date.now();
  const actors = spec.actors ?? [ANA];
  return actors
    .map((actor, index): Activity => ({
      verb,
      targetId,
      targetType: spec.targetType ?? 'post',
      targetName: spec.targetName ?? 'A day out',
      lastActionId: index === 0 ? (spec.lastActionId ?? 'comment-1') : `${targetId}-action-${index}`,
      feed: spec.feed ?? { kind: 'community', id: 'c1', name: 'Hiking Club' },
      ...(spec.mentionIn ? { mentionIn: spec.mentionIn } : {}),
      ...(spec.parentTargetId === undefined ? {} : { parentTargetId: spec.parentTargetId }),
      ...(spec.lastActionSegmentNo === undefined ? {} : { lastActionSegmentNo: spec.lastActionSegmentNo }),
      actor,
      at: lastUpdate - index,
      audience: { kind: 'user', userId: spec.userId },
    }))
    .reverse();
}

/** Writes each record through storage.writes (and marks read those asked); returns their keys. */
export async function seedRecords(
  storage: Pick<TrayStorage, 'writes' | 'records'>,
  specs: readonly SeedRecord[],
): Promise<string[]> {
  const keys: string[] = [];
  for (const spec of specs) {
    const activities = seedActivities(spec);
    const [first] = activities;
    if (!first) continue;
    const lastUpdate = spec.lastUpdate ?? Date.now();
    const now = spec.unreadAt ?? lastUpdate;
    await storage.writes.applyPersonal(activities, {
      now,
      retentionDays: spec.expired ? 0 : 90,
    });
    if (spec.hasRead) await storage.records.markRead(spec.userId, first.verb, first.targetId, now);
    keys.push(encodeRecordKey({ verb: first.verb, targetId: first.targetId, userId: spec.userId }));
  }
  return keys;
}

/** A record of one message shape (tray-record-builder's TrayRecordSpec), as a seed. */
export function seedOfSpec(spec: TrayRecordSpec): SeedRecord {
  const names = spec.names ?? actorNames;
  const feedName = spec.feedName ?? (spec.feed === 'community' ? 'Hiking Club' : 'Ana');
  return {
    userId: spec.userId ?? 'reader',
    verb: spec.verb,
    targetId: `target-${spec.verb}`,
    targetType: spec.feed === 'community' && spec.verb === 'post' ? 'community' : 'post',
    targetName: feedName,
    lastUpdate: Date.UTC(2026, 0, 15, 12),
    feed:
      spec.feed === 'community'
        ? { kind: 'community', id: 'community-hiking', name: feedName }
        : { kind: 'user', id: 'user-feed-owner', name: feedName },
    ...(spec.mentionIn ? { mentionIn: spec.mentionIn } : {}),
    actors: Array.from({ length: spec.actors }, (_, index) => ({
      userId: `user-${index}`,
      name: names[index] ?? `Actor ${index + 1}`,
    })),
  };
}

export type { TrayRecord };

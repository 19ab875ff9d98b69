import type { Db } from 'mongodb';
import { recordStorageKeys } from '../../tray-service/storage/mongodb/records/storage-keys.ts';
import { type TrayVerb } from '../../tray-service/domain/tray-verb.ts';
import { TRAY_RECORDS } from '../../tray-service/storage/mongodb/collections/collection-names.ts';
import { type TrayRecordDoc } from '../../tray-service/storage/mongodb/collections/tray-records-collection.ts';
import { DAY_MS } from '../../shared/time/durations.ts';
import { recordKey } from '../../tray-service/domain/activity.ts';
import { encodeRecordKey } from '../../tray-service/domain/record-key.ts';
import type { InboxRecord } from '../../tray-service/domain/inbox-record.ts';
import { NEW_INBOX_STATE } from '../../tray-service/domain/inbox-state.ts';

/**
 * The one place that knows every stored field of a tray record (the MongoDB adapter's collections/tray-records-collection.ts): when
 * the stored shape changes, this file changes and the tests that build records keep compiling.
 */

/** A valid stored record (the worker's shape); each test overrides only what it is about. */
export function aTrayRecord(overrides: Partial<TrayRecordDoc> & { userId: string }): TrayRecordDoc {
  const verb: TrayVerb = overrides.verb ?? 'comment';
  const targetId = overrides.targetId ?? `post-${Math.random().toString(36).slice(2, 10)}`;
  const lastUpdate = overrides.lastUpdate ?? Date.now();
  const actors = overrides.actors ?? [
    { userId: 'ana', name: 'Ana', imageUrl: 'https://img.example/ana.png', at: lastUpdate },
  ];
  const expiresAt = overrides.expiresAt ?? new Date(lastUpdate + 90 * DAY_MS);
  return {
    // The key the worker gives it, so a test's record is the one the worker would find.
    _id: recordKey(verb, targetId, overrides.userId),
    verb,
    targetId,
    targetType: 'post',
    targetName: 'A day out',
    lastActionId: 'comment-1',
    feed: { kind: 'community', id: 'c1', name: 'Hiking Club' },
    actors,
    actorsCount: actors.length,
    countFrom: Math.min(lastUpdate, ...actors.map((actor) => actor.at)),
    lastUpdate,
    hasRead: false,
    isSeen: false,
    archivedAt: null,
    snoozedUntil: null,
    box: 'inbox',
    unreadAt: overrides.unreadAt ?? lastUpdate,
    expiresAt,
    ...recordStorageKeys({ verb, targetId }),
    // As the worker does: a record starts at its creation time, so a re-created one never meets
    // the claims of its previous life.
    version: Date.now(),
    ...overrides,
  };
}

/** Inserts records as the worker stores them (tray_records). */
export async function insertRecords(db: Db, records: readonly TrayRecordDoc[]): Promise<void> {
  if (records.length > 0) await db.collection<TrayRecordDoc>(TRAY_RECORDS).insertMany([...records]);
}

/** Actor names in the order of the English reference table (docs/messages.md): the latest actor first. */
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
 * A record for one message shape, so a message test changes one thing. The defaults match the
 * English reference table: community "Hiking Club", a user feed owned by Ana.
 */
export function buildTrayRecord(spec: TrayRecordSpec): TrayRecordDoc {
  const names = spec.names ?? actorNames;
  const feedName = spec.feedName ?? (spec.feed === 'community' ? 'Hiking Club' : 'Ana');
  const now = Date.UTC(2026, 0, 15, 12);
  const named = Array.from({ length: Math.min(spec.actors, 3) }, (_, index) => ({
    userId: `user-${index}`,
    name: names[index] ?? `Actor ${index + 1}`,
    at: now - index * 60_000,
  }));
  return aTrayRecord({
    userId: spec.userId ?? 'reader',
    verb: spec.verb,
    targetId: `target-${spec.verb}`,
    targetType: spec.feed === 'community' && spec.verb === 'post' ? 'community' : 'post',
    targetName: feedName,
    lastActionId: `action-${spec.actors}`,
    feed:
      spec.feed === 'community'
        ? { kind: 'community', id: 'community-hiking', name: feedName }
        : { kind: 'user', id: 'user-feed-owner', name: feedName },
    ...(spec.mentionIn ? { mentionIn: spec.mentionIn } : {}),
    actors: named,
    actorsCount: spec.actors,
    countFrom: now - spec.actors * 60_000,
    lastUpdate: now,
  });
}

/**
 * A record as readers see it, with its inbox state (what the storage port hands out and the live
 * tray publishes; a new record's state unless overridden); each test overrides only what it is about.
 */
export function aReaderRecord(overrides: Partial<InboxRecord> & { userId: string }): InboxRecord {
  const verb: TrayVerb = overrides.verb ?? 'comment';
  const targetId = overrides.targetId ?? `post-${Math.random().toString(36).slice(2, 10)}`;
  const lastUpdate = overrides.lastUpdate ?? Date.now();
  const actors = overrides.actors ?? [
    { userId: 'ana', name: 'Ana', imageUrl: 'https://img.example/ana.png', at: lastUpdate },
  ];
  return {
    key: encodeRecordKey({ verb, targetId, userId: overrides.userId }),
    verb,
    targetId,
    targetType: 'post',
    targetName: 'A day out',
    lastActionId: 'comment-1',
    feed: { kind: 'community', id: 'c1', name: 'Hiking Club' },
    actors,
    actorsCount: actors.length,
    lastUpdate,
    hasRead: false,
    unreadAt: lastUpdate,
    changedAt: lastUpdate,
    ...NEW_INBOX_STATE,
    ...overrides,
  };
}

import type { Db } from 'mongodb';
import { recordStorageKeys } from '../../../../shared/tray/storage-keys.ts';
import { TRAY_RECORDS, type TrayRecordDoc, type TrayVerb } from '../../../../shared/tray/tray-record.ts';

const DAY_MS = 24 * 3600 * 1000;

/** A valid stored record (the worker's shape); each test overrides only what it is about. */
export function aTrayRecord(overrides: Partial<TrayRecordDoc> & { userId: string }): TrayRecordDoc {
  const verb: TrayVerb = overrides.verb ?? 'comment';
  const targetId = overrides.targetId ?? `post-${Math.random().toString(36).slice(2, 10)}`;
  const lastUpdate = overrides.lastUpdate ?? Date.now();
  const actors = overrides.actors ?? [
    { userId: 'ana', name: 'Ana', imageUrl: 'https://img.example/ana.png', at: lastUpdate },
  ];
  const expiresAt = overrides.expiresAt ?? new Date(lastUpdate + 90 * DAY_MS);
  const keyed = { userId: overrides.userId, verb, targetId, lastUpdate, expiresAt };
  return {
    _id: `${verb}_${targetId}_${overrides.userId}`,
    verb,
    targetId,
    targetType: 'post',
    targetName: 'A day out',
    lastActionId: 'comment-1',
    feed: { kind: 'community', id: 'c1', name: 'Hiking Club' },
    actors,
    actorIds: actors.map((actor) => actor.userId),
    actorsCount: actors.length,
    countFrom: Math.min(...actors.map((actor) => actor.at)),
    lastUpdate,
    hasRead: false,
    unreadAt: overrides.unreadAt ?? lastUpdate,
    expiresAt,
    ...recordStorageKeys(keyed, Date.now()),
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

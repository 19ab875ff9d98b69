import type { TrayRecord } from '../domain/tray-record.ts';
import type { RemovedRecord } from '../storage/port.ts';

/** One change of one user's tray, as published on the user's shard channel. */
export type LiveChange =
  /** Records created or changed by the worker (new activity, a deleted actor renamed). */
  | { kind: 'record'; userId: string; records: TrayRecord[] }
  /** Records the worker removed (a removal left them with no action): their keys. */
  | { kind: 'removed'; userId: string; ids: string[] }
  /** Records marked read through the API (v2/read, v3/mark-all-as-read): only what identifies each state. */
  | { kind: 'read'; userId: string; records: ReadMark[] }
  /** Every record deleted (v3/delete-all) at `at`. */
  | { kind: 'cleared'; userId: string; at: number }
  /** The last-read time moved (v2/last-read): only the unread count changes. */
  | { kind: 'last-read'; userId: string };

/**
 * A record state marked read: the stream needs its key, and its change time, which both orders
 * the cursor and tells this state from the record's earlier ones.
 */
export type ReadMark = Pick<TrayRecord, 'key' | 'changedAt'>;

/** Groups removed records into one change per user. */
export function removalsOf(records: readonly RemovedRecord[]): LiveChange[] {
  const byUser = new Map<string, string[]>();
  for (const { userId, key } of records) byUser.set(userId, [...(byUser.get(userId) ?? []), key]);
  return [...byUser].map(([userId, ids]) => ({ kind: 'removed', userId, ids }));
}

/** Groups written records into one change per user. */
export function changesOf(kind: 'record' | 'read', records: readonly TrayRecord[]): LiveChange[] {
  const byUser = new Map<string, TrayRecord[]>();
  for (const record of records) {
    const list = byUser.get(record.userId);
    if (list) list.push(record);
    else byUser.set(record.userId, [record]);
  }
  return [...byUser].map(([userId, list]) =>
    kind === 'record'
      ? { kind, userId, records: list }
      : { kind, userId, records: list.map(({ key, changedAt }) => ({ key, changedAt })) },
  );
}

const kinds = new Set(['record', 'removed', 'read', 'cleared', 'last-read']);

/**
 * The changes of one channel message, or [] for a message this service did not publish. The
 * channel is ours, so a shape check (not a full schema) is enough to never throw on it.
 */
export function parseChanges(message: string): LiveChange[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  return parsed.filter(
    (change): change is LiveChange =>
      typeof change === 'object' &&
      change !== null &&
      kinds.has((change as { kind?: unknown }).kind as string) &&
      typeof (change as { userId?: unknown }).userId === 'string' &&
      (!('records' in change) || Array.isArray((change as { records?: unknown }).records)),
  );
}

import type { InboxRecord } from '../domain/inbox-record.ts';
import type { TrayRecord } from '../domain/tray-record.ts';
import type { MarkedRecord, RemovedRecord } from '../storage/port.ts';

/** One change of one user's tray, as published on the user's shard channel. */
export type LiveChange =
  /**
   * Records created or changed by the worker (new activity, a removal, a deleted actor renamed), or
   * back in the inbox (unarchived, unsnoozed, woken), each with its inbox state.
   */
  | { kind: 'record'; userId: string; records: InboxRecord[] }
  /** Records the worker removed (a removal left them with no action): their keys. */
  | { kind: 'removed'; userId: string; ids: string[] }
  /**
   * Records marked read through the API (v2/read, v3/mark-all-as-read), seen or archived
   * (v3/records/seen, archive): only what identifies each state.
   */
  | { kind: 'read' | 'seen' | 'archived'; userId: string; records: ReadMark[] }
  /** Records snoozed until `until` (v3/records/snooze): likewise. */
  | { kind: 'snoozed'; userId: string; records: ReadMark[]; until: number }
  /** Every record deleted (v3/delete-all) at `at`. */
  | { kind: 'cleared'; userId: string; at: number }
  /** The last-read time moved (v2/last-read): only the unread count changes. */
  | { kind: 'last-read'; userId: string }
  /**
   * A newer stream of the user took this stream's place at STREAMS_PER_USER (stream-slots.ts):
   * the instance holding it ends it. Not a change of the tray: no stream is sent anything else.
   */
  | { kind: 'replaced'; userId: string; streamId: string }
  /**
   * Changes of the user from `since` on may not have reached the streams: their publish failed
   * (change-publisher.ts). Each stream catches up from then and recounts.
   */
  | { kind: 'resync'; userId: string; since: number };

/**
 * A record state marked read: the stream needs its key, and its change time, which both orders
 * the cursor and tells this state from the record's earlier ones; and the change time of the state
 * the mark changed: a stream that has not delivered that one has no record to apply the mark to
 * (or an older state of it), and catches up on the record instead.
 */
export type ReadMark = Pick<MarkedRecord, 'key' | 'changedAt' | 'changedBefore'>;

/** One user's removed records, as announced. */
export type RemovedChange = Extract<LiveChange, { kind: 'removed' }>;

/** Groups removed records into one change per user (a post's deletion: one per member). */
export function removalsOf(records: readonly RemovedRecord[]): RemovedChange[] {
  const byUser = new Map<string, string[]>();
  for (const { userId, key } of records) {
    const ids = byUser.get(userId);
    if (ids) ids.push(key);
    else byUser.set(userId, [key]);
  }
  return [...byUser].map(([userId, ids]) => ({ kind: 'removed', userId, ids }));
}

/** The records of each user, in order. */
function byUser<R extends Pick<TrayRecord, 'userId'>>(records: readonly R[]): Map<string, R[]> {
  const users = new Map<string, R[]>();
  for (const record of records) {
    const list = users.get(record.userId);
    if (list) list.push(record);
    else users.set(record.userId, [record]);
  }
  return users;
}

const marksOf = (records: readonly MarkedRecord[]): ReadMark[] =>
  records.map(({ key, changedAt, changedBefore }) => ({ key, changedAt, changedBefore }));

/** Groups written records into one change per user. */
export function changesOf(kind: 'record', records: readonly InboxRecord[]): LiveChange[] {
  return [...byUser(records)].map(([userId, list]) => ({ kind, userId, records: list }));
}

/** Groups marked records into one change per user, each record by what identifies its state. */
export function marksChanges(
  mark: { kind: 'read' | 'seen' | 'archived' } | { kind: 'snoozed'; until: number },
  records: readonly MarkedRecord[],
): LiveChange[] {
  return [...byUser(records)].map(([userId, list]): LiveChange => ({
    ...mark,
    userId,
    records: marksOf(list),
  }));
}

/**
 * The earliest change time of `change`: where its user's streams catch up from when its publish
 * failed. `now` for a change that names none (a removal, a new last-read time): the streams then
 * only recount.
 */
export function lostSince(change: LiveChange, now: number): number {
  switch (change.kind) {
    case 'record':
    case 'read':
    case 'seen':
    case 'archived':
    case 'snoozed':
      return change.records.reduce((earliest, record) => Math.min(earliest, record.changedAt), now);
    case 'cleared':
      return Math.min(change.at, now);
    case 'resync':
      return change.since;
    case 'removed':
    case 'last-read':
    case 'replaced':
      return now;
  }
}

const kinds = new Set([
  'record',
  'removed',
  'read',
  'seen',
  'archived',
  'snoozed',
  'cleared',
  'last-read',
  'replaced',
  'resync',
]);

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
      (!('records' in change) || Array.isArray((change as { records?: unknown }).records)) &&
      ((change as { kind?: unknown }).kind !== 'replaced' ||
        typeof (change as { streamId?: unknown }).streamId === 'string') &&
      ((change as { kind?: unknown }).kind !== 'resync' ||
        typeof (change as { since?: unknown }).since === 'number'),
  );
}

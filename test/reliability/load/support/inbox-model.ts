import { mapEvent } from '../../../../tray-service/domain/map-event.ts';
import type { Activity } from '../../../../tray-service/domain/activity.ts';
import { inboxViews, type InboxView } from '../../../../tray-service/domain/inbox-view.ts';
import type { InboxRecord } from '../../../../tray-service/domain/inbox-record.ts';
import {
  referenceTray,
  type ReferenceTray,
  type TrayOperation,
} from '../../../support/reference-tray/reference-tray.ts';
import {
  liveInboxRecords,
  referenceCountUnread,
  referenceCountUnseen,
} from '../../../support/reference-tray/reference-tray-reads.ts';
import { trayToken } from '../../support/tray-process.ts';
import type { LoadEvent } from './load-sequence.ts';

/** A step of the run in the order the tray met it: a batch of events, or an API call's operation. */
export type RunStep = { events: readonly LoadEvent[] } | { operation: TrayOperation };

/**
 * The operations the worker applies for one event, as the reference tray takes them: the event is
 * mapped by the product's own mapping (the payload paths are not what this run tests; the tray's
 * rules are), personal activities and a community's posts apart, as the storage port receives them.
 */
export function eventOperations(event: LoadEvent, now: number): TrayOperation[] {
  const envelope = JSON.parse(event.body) as { event: string; data: Record<string, unknown> };
  const mapped = mapEvent({ ...envelope, receivedAt: now });
  if (mapped.status !== 'applied') return [];
  const operations: TrayOperation[] = [];
  if (mapped.memberships.length > 0)
    operations.push({ kind: 'membership', changes: mapped.memberships, now });
  const personal = mapped.activities.filter((activity) => activity.audience.kind === 'user');
  if (personal.length > 0) operations.push({ kind: 'personal', activities: personal, now });
  const byCommunity = new Map<string, Activity[]>();
  for (const activity of mapped.activities)
    if (activity.audience.kind === 'community')
      byCommunity.set(activity.audience.communityId, [
        ...(byCommunity.get(activity.audience.communityId) ?? []),
        activity,
      ]);
  for (const [communityId, posts] of byCommunity) operations.push({ kind: 'posts', communityId, posts, now });
  if (mapped.removals && mapped.removals.length > 0)
    operations.push({ kind: 'removal', removals: mapped.removals, now });
  return operations;
}

/** The reference tray after the run's steps, then the wake-up at `now` (every due snooze ended). */
export function inboxModel(
  steps: readonly RunStep[],
  now: number,
  leaveOut: readonly TrayOperation['kind'][] = [],
): ReferenceTray {
  const operations = steps.flatMap((step) =>
    'operation' in step ? [step.operation] : step.events.flatMap((event) => eventOperations(event, now)),
  );
  return referenceTray(
    [...operations.filter((operation) => !leaveOut.includes(operation.kind)), { kind: 'wake', now }],
    { retentionDays: 90 },
  );
}

/**
 * How many of the users' records (in any view) the operations of these kinds change: `full`, the
 * model of every step, against the model without them. Printed with the figures, it shows what the check would miss if
 * the tray ignored them.
 */
export function recordsChangedBy(
  full: ReferenceTray,
  steps: readonly RunStep[],
  kinds: readonly TrayOperation['kind'][],
  users: readonly string[],
  now: number,
): number {
  const without = inboxModel(steps, now, kinds);
  let changed = 0;
  for (const userId of users) {
    const other = new Map(
      liveInboxRecords(without, userId, now, 'all').map((record) => [record.key, comparable(record)]),
    );
    for (const record of liveInboxRecords(full, userId, now, 'all')) {
      const before = other.get(record.key);
      other.delete(record.key);
      if (JSON.stringify(before) !== JSON.stringify(comparable(record))) changed += 1;
    }
    changed += other.size;
  }
  return changed;
}

export interface InboxMismatch {
  readonly userId: string;
  /** A view (`inbox`, `archived`, `snoozed`, `all`), `unread` or `unseen`. */
  readonly what: string;
  readonly key?: string;
  readonly field: string;
  readonly expected: unknown;
  readonly actual: unknown;
}

interface ServedRecord {
  v_tarid_uid: string;
  lastUpdate: number;
  lastActionId: string;
  actorsCount: number;
  actors?: { name: string }[];
  hasRead: boolean;
  isSeen: boolean;
  archivedAt: number | null;
  snoozedUntil: number | null;
}

/** Fields compared record by record; archivedAt is the tray's clock at the call, so only its presence. */
function comparable(record: ServedRecord | InboxRecord): Record<string, unknown> {
  const actors = record.actors ?? [];
  return {
    lastUpdate: record.lastUpdate,
    lastActionId: record.lastActionId,
    actorsCount: record.actorsCount,
    actorNames: actors.map((actor) => actor.name),
    hasRead: record.hasRead,
    isSeen: record.isSeen,
    archived: record.archivedAt !== null,
    snoozedUntil: record.snoozedUntil,
  };
}

async function getJson<T>(port: number, path: string, token: string): Promise<T> {
  const answer = await fetch(`http://127.0.0.1:${port}${path}`, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(10_000),
  });
  if (!answer.ok) throw new Error(`GET ${path}: HTTP ${answer.status}`);
  return (await answer.json()) as T;
}

/** Every page of a view as the running tray process serves it. */
async function servedView(port: number, token: string, view: InboxView): Promise<ServedRecord[]> {
  const records: ServedRecord[] = [];
  let startAfter = 1;
  for (;;) {
    const page = await getJson<{ nextPage: number; data: ServedRecord[] }>(
      port,
      `/notifications/v3/history?view=${view}&startAfter=${startAfter}`,
      token,
    );
    records.push(...page.data);
    if (page.nextPage === 0) return records;
    startAfter = page.nextPage;
  }
}

/**
 * Every user's four views (page by page, through the API of the running process) and both counts
 * against the model: the same records in each view, newest first, field by field.
 */
export async function checkInboxAgainstModel(
  port: number,
  model: ReferenceTray,
  users: readonly string[],
  now: number,
): Promise<{ users: number; records: number; mismatches: InboxMismatch[] }> {
  const mismatches: InboxMismatch[] = [];
  let records = 0;
  for (const userId of users) {
    const token = await trayToken(userId, '10m');
    for (const view of inboxViews) {
      const want = liveInboxRecords(model, userId, now, view);
      if (view === 'all') records += want.length;
      const served = await servedView(port, token, view);
      const got = new Map(served.map((record) => [record.v_tarid_uid, record]));
      const mismatch = (key: string | undefined, field: string, expected: unknown, actual: unknown) =>
        mismatches.push({ userId, what: view, ...(key ? { key } : {}), field, expected, actual });
      for (const record of want) {
        const actual = got.get(record.key);
        got.delete(record.key);
        if (!actual) {
          mismatch(record.key, 'record', 'present', 'absent');
          continue;
        }
        const [expected, stored] = [comparable(record), comparable(actual)];
        for (const field of Object.keys(expected))
          if (JSON.stringify(expected[field]) !== JSON.stringify(stored[field]))
            mismatch(record.key, field, expected[field], stored[field]);
      }
      for (const key of got.keys()) mismatch(key, 'record', 'absent', 'present');
      const times = served.map((record) => record.lastUpdate);
      if (times.some((time, index) => index > 0 && time > times[index - 1]!))
        mismatch(undefined, 'order', 'newest first', times.join(','));
    }
    const counts = await getJson<{ data: { totalUnreadCount: number; totalUnseenCount: number } }>(
      port,
      '/notifications/v3',
      token,
    );
    const unread = referenceCountUnread(model, userId, model.lastRead(userId), now);
    const unseen = referenceCountUnseen(model, userId, now);
    if (counts.data.totalUnreadCount !== unread)
      mismatches.push({
        userId,
        what: 'unread',
        field: 'count',
        expected: unread,
        actual: counts.data.totalUnreadCount,
      });
    if (counts.data.totalUnseenCount !== unseen)
      mismatches.push({
        userId,
        what: 'unseen',
        field: 'count',
        expected: unseen,
        actual: counts.data.totalUnseenCount,
      });
  }
  return { users: users.length, records, mismatches };
}

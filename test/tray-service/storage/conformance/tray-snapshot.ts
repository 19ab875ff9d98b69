import type { ReferenceTray } from '../../../support/reference-tray/reference-tray.ts';
import {
  liveRecords,
  referenceChangedSince,
  referenceCountUnread,
  referenceHistory,
  referencePageNumber,
} from '../../../support/reference-tray/reference-tray-reads.ts';
import type { InboxRecord } from '../../../../tray-service/domain/inbox-record.ts';
import type { InboxState } from '../../../../tray-service/domain/inbox-state.ts';
import type { TrayRecord } from '../../../../tray-service/domain/tray-record.ts';
import type { TrayStorage } from '../../../../tray-service/storage/port.ts';

/** Everything a reader can see of one user's tray: compared whole between an adapter and the model. */
export interface TraySnapshot {
  /** v3 pages of a walk from the first page to nextPage 0. */
  history: TrayRecord[][];
  /** v2 pages 1.. until the first empty one (mentions excluded). */
  numbered: TrayRecord[][];
  count: number;
  countWithoutMentions: number;
  lastRead: number;
  unread: number;
  clearedAt: number;
  /**
   * changedSince(`since`), each record's change and inbox state (what a reconnecting stream shows
   * of it), by key: the order of changedAt is changesInOrder's, and two records changed by one
   * operation may be a millisecond apart in one engine and not in another (CHANGED_AT_SLACK_MS).
   */
  changes: ChangedState[];
  /** Whether changedSince returned its records oldest change first. */
  changesInOrder: boolean;
}

/** Small pages, so ties of lastUpdate straddle page ends. */
export const SNAPSHOT_PAGE_SIZE = 3;

/** What the storage returns, as plain data (undefined fields dropped, as the model has none). */
export function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** A changed record as the snapshot compares it: when and which, and where it stands in the inbox. */
export type ChangedState = Pick<InboxRecord, 'changedAt' | 'key'> & InboxState;

/** The change and inbox state of each record, by key. */
function changeList(records: readonly InboxRecord[]): ChangedState[] {
  return records
    .map(({ changedAt, key, isSeen, archivedAt, snoozedUntil }) => ({
      changedAt,
      key,
      isSeen,
      archivedAt,
      snoozedUntil,
    }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

export async function storageSnapshot(
  storage: TrayStorage,
  userId: string,
  now: number,
  since: number,
): Promise<TraySnapshot> {
  const history: TrayRecord[][] = [];
  let startAfter: number | undefined;
  for (let guard = 0; guard < 100; guard++) {
    const page = await storage.records.pageAfter(userId, startAfter, SNAPSHOT_PAGE_SIZE, now);
    history.push(page.records);
    if (page.nextPage === 0) break;
    startAfter = page.nextPage;
  }
  const numbered: TrayRecord[][] = [];
  for (let page = 1; page < 100; page++) {
    const records = await storage.records.pageNumber(userId, page, SNAPSHOT_PAGE_SIZE, now, ['mention']);
    numbered.push(records);
    if (records.length === 0) break;
  }
  const lastRead = await storage.lastRead.latest(userId);
  const changed = await storage.records.changedSince(userId, since, now);
  return plain({
    history,
    numbered,
    count: await storage.records.count(userId, now),
    countWithoutMentions: await storage.records.count(userId, now, ['mention']),
    lastRead,
    unread: await storage.records.countUnread(userId, lastRead, now),
    clearedAt: await storage.clears.latest(userId),
    changes: changeList(changed),
    changesInOrder: changed.every(
      (record, index) => index === 0 || (changed[index - 1] as TrayRecord).changedAt <= record.changedAt,
    ),
  });
}

export function modelSnapshot(
  model: ReferenceTray,
  userId: string,
  now: number,
  since: number,
): TraySnapshot {
  const withoutMentions = liveRecords(model, userId, now, ['mention'], 'inbox');
  const numbered: TrayRecord[][] = [];
  for (let page = 1; ; page++) {
    const records = referencePageNumber(model, userId, page, SNAPSHOT_PAGE_SIZE, now, ['mention']);
    numbered.push(records);
    if (records.length === 0) break;
  }
  const lastRead = model.lastRead(userId);
  return plain({
    history: referenceHistory(model, userId, SNAPSHOT_PAGE_SIZE, now),
    numbered,
    count: liveRecords(model, userId, now, [], 'inbox').length,
    countWithoutMentions: withoutMentions.length,
    lastRead,
    unread: referenceCountUnread(model, userId, lastRead, now),
    clearedAt: model.clearedAt(userId),
    changes: changeList(referenceChangedSince(model, userId, since, now)),
    changesInOrder: true,
  });
}

/**
 * How far a record's changedAt may be from the model's. Each write of a record stamps one later
 * than its last (nextChangedAt): the writer's clock, or a millisecond more where the clock did not
 * move. The model changes a record once per operation; an engine may write it more than once (a
 * compare-and-set round lost to a concurrent writer, a rename and then a leave of one deleted
 * user), so where operations share a clock its stamps run a few milliseconds ahead, or, where the
 * model's did, behind. The cases space operations whose order of change they check further apart.
 */
export const CHANGED_AT_SLACK_MS = 50;

/** A reconnect's `since` just before `now`: what operations at `now` changed is in its catch-up on either side of CHANGED_AT_SLACK_MS. */
export const sinceBefore = (now: number) => now - 1;

/** The paths where two plain values differ, each with both sides: a readable failure of a whole snapshot. */
export function differences(actual: unknown, expected: unknown, path = ''): string[] {
  if (JSON.stringify(actual) === JSON.stringify(expected)) return [];
  if (
    path.endsWith('.changedAt') &&
    typeof actual === 'number' &&
    typeof expected === 'number' &&
    Math.abs(actual - expected) <= CHANGED_AT_SLACK_MS
  )
    return [];
  if (actual && expected && typeof actual === 'object' && typeof expected === 'object') {
    const names = new Set([...Object.keys(actual), ...Object.keys(expected)]);
    return [...names].flatMap((name) =>
      differences(
        (actual as Record<string, unknown>)[name],
        (expected as Record<string, unknown>)[name],
        `${path}.${name}`,
      ),
    );
  }
  return [`${path || '(root)'}: storage ${JSON.stringify(actual)}, model ${JSON.stringify(expected)}`];
}

import { isDeepStrictEqual } from 'node:util';
import type { Activity } from '../../../domain/activity.ts';
import { exactActors } from '../../../domain/group-actors.ts';
import type { MembershipInterval } from '../../../domain/membership-intervals.ts';
import type { TrayRecordDoc } from '../records/tray-records-collection.ts';

/**
 * A record computed again from the actions it still counts (docs/tray-rules.md#inbox, removals):
 * `actions` are its group's kept actions less the voided ones and those its recipient's mutes held
 * back; `away` the recipient's away spans on a community's target. Its actors are the newest three
 * left, `actorsCount` counts those left, `lastActionId` and `lastActionSegmentNo` come from the
 * newest action left (by createdAt, ties by action id). Nothing new happened: `lastUpdate`, the
 * read, seen and inbox state, the other latest fields and the expiry stay. 'delete' when no action
 * is left. Pure.
 */
export function shrinkRecord(
  record: TrayRecordDoc,
  actions: readonly Activity[],
  away: readonly MembershipInterval[],
): TrayRecordDoc | 'unchanged' | 'delete' {
  const { named, count, newest } = exactActors(actions, record.countFrom, record.userId, away);
  if (!newest) return 'delete';
  const counted = {
    actors: named,
    actorsCount: count,
    lastActionId: newest.lastActionId,
    lastActionSegmentNo: newest.lastActionSegmentNo,
  };
  const before = {
    actors: record.actors,
    actorsCount: record.actorsCount,
    lastActionId: record.lastActionId,
    lastActionSegmentNo: record.lastActionSegmentNo,
  };
  if (isDeepStrictEqual(counted, before)) return 'unchanged';
  const { lastActionSegmentNo: _segment, ...kept } = record;
  return {
    ...kept,
    actors: named,
    actorsCount: count,
    lastActionId: newest.lastActionId,
    ...(newest.lastActionSegmentNo === undefined ? {} : { lastActionSegmentNo: newest.lastActionSegmentNo }),
    version: record.version + 1,
  };
}

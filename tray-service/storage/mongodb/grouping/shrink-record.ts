import { isDeepStrictEqual } from 'node:util';
import { exactActors } from '../../../domain/group-actors.ts';
import type { KeptActivity } from '../../../domain/kept-activity.ts';
import type { MembershipEdge } from '../../../domain/membership-intervals.ts';
import { lastActionTime, storedActionTime } from '../records/last-action-time.ts';
import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';

/**
 * A record computed again from the actions it still counts (docs/tray-rules.md#inbox, removals):
 * `actions` are its group's kept actions less the voided ones and those its recipient's mutes held
 * back; `edges` the recipient's joins and leaves in the community of a community's target (with the
 * kept actions in the processing order: exactActors). Its actors are the newest three
 * left, `actorsCount` counts those left, `lastActionId` and `lastActionSegmentNo` come from the
 * newest action left (by createdAt, ties by action id), and `lastActionAt` names that action's time
 * when it is older than lastUpdate. Nothing new happened: `lastUpdate`, the read, seen and inbox
 * state, the other latest fields and the expiry stay, and lastUpdate becomes the floor no later
 * recomputation goes below (`updateFloor`). 'delete' when no action is left. Pure.
 */
export function shrinkRecord(
  record: TrayRecordDoc,
  actions: readonly KeptActivity[],
  edges: readonly MembershipEdge[],
): TrayRecordDoc | 'unchanged' | 'delete' {
  const { named, count, newest } = exactActors(actions, record.countFrom, record.userId, edges);
  if (!newest) return 'delete';
  const counted = {
    actors: named,
    actorsCount: count,
    lastActionId: newest.lastActionId,
    lastActionSegmentNo: newest.lastActionSegmentNo,
    actionAt: newest.at,
  };
  const before = {
    actors: record.actors,
    actorsCount: record.actorsCount,
    lastActionId: record.lastActionId,
    lastActionSegmentNo: record.lastActionSegmentNo,
    actionAt: lastActionTime(record),
  };
  if (isDeepStrictEqual(counted, before)) return 'unchanged';
  const { lastActionSegmentNo: _segment, lastActionAt: _actionAt, ...kept } = record;
  return {
    ...kept,
    actors: named,
    actorsCount: count,
    lastActionId: newest.lastActionId,
    ...(newest.lastActionSegmentNo === undefined ? {} : { lastActionSegmentNo: newest.lastActionSegmentNo }),
    ...storedActionTime(newest.at, record.lastUpdate),
    updateFloor: record.lastUpdate,
    version: record.version + 1,
  };
}

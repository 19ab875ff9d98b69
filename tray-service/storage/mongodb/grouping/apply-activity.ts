import { isDeepStrictEqual } from 'node:util';
import type { TrayRecordDoc } from '../collections/tray-records-collection.ts';
import { DAY_MS } from '../../../../shared/time/durations.ts';
import { recordStorageKeys } from '../records/storage-keys.ts';
import { recordKey, type Activity, type ActorInfo } from '../../../domain/activity.ts';
import type { ActorSnapshot } from '../../../domain/actor-snapshot.ts';
import {
  compareActions,
  countedActors,
  exactActors,
  type GroupActors,
} from '../../../domain/group-actors.ts';
import {
  awayForAction,
  isAwaySince,
  type MembershipEdge,
  type MembershipInterval,
} from '../../../domain/membership-intervals.ts';
import { processedOf, type KeptActivity } from '../../../domain/kept-activity.ts';
import { reopened } from '../../../domain/inbox-state.ts';
import { lastActionTime, storedActionTime, storedFloor } from '../records/last-action-time.ts';

export interface ApplyOptions {
  /** Days a record lives after lastUpdate (TRAY_RETENTION_DAYS). */
  retentionDays: number;
}

export interface ApplyContext extends ApplyOptions {
  /** The record group's actors as stored, read after the record (see writeDeliveries). */
  actors: GroupActors;
  /** The tray's clock (epoch ms): when this change is made. */
  now: number;
  /**
   * On a community's target: the recipient's away spans there (memberSpans), none when the tray
   * knows no join or leave of theirs (docs/tray-rules.md#leaving-and-rejoining-a-community).
   */
  away?: readonly MembershipInterval[];
  /** The joins and leaves `away` was folded from, with their places in the processing order (awayFor). */
  edges?: readonly MembershipEdge[];
  /** The group's kept actions (readTargetActions): read when `away` has a span after countFrom. */
  actions?: readonly KeptActivity[];
  /**
   * Whether one of the recipient's mutes held an action back (with `actions`): the record is then
   * counted exactly from the kept actions without those (docs/tray-rules.md#inbox).
   */
  heldBack?: (action: Activity) => boolean;
}

/**
 * The grouping core (docs/tray-engine.md): folds one activity into a recipient's record. Pure.
 * The record's actors and count come from its group's actors (kept once per target, not per
 * recipient, so a record stays the same size however many people act on its target); the
 * activity itself decides the "latest action" fields when it is the newest. Returns 'unchanged'
 * when nothing the recipient sees would change, so a redelivered job writes nothing and a record
 * the user has read stays read.
 */
export function applyActivity(
  record: TrayRecordDoc | undefined,
  activity: KeptActivity,
  recipientId: string,
  context: ApplyContext,
): TrayRecordDoc | 'unchanged' {
  // An action on a community's target reaches no one who was away from it at its time, judged as
  // when it was first processed (a leave processed after it takes nothing back).
  if (awayForAction(context.edges ?? [], activity, processedOf(activity))) return 'unchanged';
  // An older action delivered late widens what the record counts; nothing narrows it.
  const countFrom = record ? Math.min(record.countFrom, activity.at) : activity.at;
  const { named, count } = counted(context, countFrom, recipientId);
  // Against the action the record names: after a removal it may be older than lastUpdate.
  const newest =
    !record ||
    compareActions(
      { at: activity.at, actionId: activity.lastActionId },
      { at: lastActionTime(record), actionId: record.lastActionId },
    ) > 0;
  // Fields that describe "the latest action" come from the newest activity; an older one delivered
  // late only adds its actor (out-of-order delivery never moves lastUpdate backwards, nor below
  // where a removal left it). lastUpdate reaches every action delivered, even one a removal named
  // before it came (docs/tray-rules.md#inbox).
  const latest = newest ? describe(activity) : describeRecord(record);
  const lastUpdate = Math.max(activity.at, record?.lastUpdate ?? activity.at);
  const actionAt = newest ? activity.at : lastActionTime(record ?? { lastUpdate });
  const seen = {
    verb: activity.verb,
    targetId: activity.targetId,
    targetType: activity.targetType,
    ...latest,
    actors: named,
    actorsCount: count,
    countFrom,
    lastUpdate,
  };
  if (record && sameAsRecord(seen, record) && lastActionTime(record) === actionAt) return 'unchanged';
  const expiresAt = new Date(lastUpdate + context.retentionDays * DAY_MS);
  return {
    _id: recordKey(activity.verb, activity.targetId, recipientId),
    userId: recipientId,
    ...seen,
    ...storedActionTime(actionAt, lastUpdate),
    ...storedFloor(record?.updateFloor),
    // New activity makes a read record unread again; a new record starts unread. It also brings
    // the record back to the inbox, unseen, out of the archive or a snooze (docs/tray-rules.md#inbox).
    hasRead: false,
    ...reopened(),
    box: 'inbox',
    unreadAt: context.now,
    expiresAt,
    ...recordStorageKeys(seen),
    version: record ? record.version + 1 : context.now,
  };
}

/**
 * The actors a record counts: the group's, each at their latest action, unless the recipient was
 * away at some time since countFrom; then exactly those of the kept actions outside their away time.
 */
function counted(context: ApplyContext, countFrom: number, recipientId: string) {
  const away = context.away ?? [];
  const edges = context.edges ?? [];
  const { heldBack, actions } = context;
  if (heldBack && actions)
    return exactActors(
      actions.filter((action) => !heldBack(action)),
      countFrom,
      recipientId,
      edges,
    );
  if (!isAwaySince(away, countFrom)) return countedActors(context.actors, countFrom, recipientId);
  if (!context.actions) throw new Error('applyActivity: the group’s kept actions were not read');
  return exactActors(context.actions, countFrom, recipientId, edges);
}

/**
 * A record of a community's target computed again after a leave (docs/tray-rules.md#leaving-and-rejoining-a-community):
 * its actors from the group's kept actions outside the recipient's away spans; a record whose
 * latest action fell while away takes its latest fields from its newest remaining action; one
 * with none left is to be deleted. Nothing new happened: the read flag and unreadAt stay. Pure.
 *
 * `namesNewer`: a newer counted action than the one the record names moves the latest fields too.
 * Only for a recomputation repeated because the member's joins changed while an earlier round
 * wrote (recompute-member-records.ts): the join's backfill read the record before that round took
 * the newer action back, so it found nothing to add and cannot move the record forward itself.
 * Otherwise a newer counted action is one the record never showed (delivered before a delete-all
 * or a profile delete wiped the tray the record was made again in), and it stays unshown, as it
 * would had no leave come.
 */
export function recomputeRecord(
  record: TrayRecordDoc,
  actions: readonly KeptActivity[],
  edges: readonly MembershipEdge[],
  context: ApplyOptions & { now: number; namesNewer?: boolean },
): TrayRecordDoc | 'unchanged' | 'delete' {
  const { named, count, newest } = exactActors(actions, record.countFrom, record.userId, edges);
  if (!newest) return 'delete';
  const shown = { at: lastActionTime(record), actionId: record.lastActionId };
  // The action the record names, when kept, counts no more (its recipient was away for it).
  const shownAction = actions.find(
    (action) => action.lastActionId === shown.actionId && action.at === shown.at,
  );
  const moved =
    (shownAction !== undefined && awayForAction(edges, shownAction, processedOf(shownAction))) ||
    (context.namesNewer === true &&
      compareActions({ at: newest.at, actionId: newest.lastActionId }, shown) > 0);
  const latest = moved ? describe(newest) : describeRecord(record);
  // lastUpdate never moves backwards: it orders the history, and a record lowered below a walk that
  // returned it would be returned again (docs/tray-api.md#paging-v3-startafternextpage). The action
  // named moves back alone (lastActionAt), as after a removal.
  const lastUpdate = moved ? Math.max(newest.at, record.lastUpdate) : record.lastUpdate;
  const actionAt = moved ? newest.at : lastActionTime(record);
  const seen = { ...latest, actors: named, actorsCount: count, lastUpdate, actionAt };
  const { targetName, parentTargetId, lastActionId, lastActionSegmentNo, feed, mentionIn } = record;
  const before = {
    targetName,
    parentTargetId,
    lastActionId,
    lastActionSegmentNo,
    feed,
    mentionIn,
    actors: record.actors,
    actorsCount: record.actorsCount,
    lastUpdate: record.lastUpdate,
    actionAt: lastActionTime(record),
  };
  if (isDeepStrictEqual(JSON.parse(JSON.stringify(seen)), JSON.parse(JSON.stringify(before))))
    return 'unchanged';
  const {
    parentTargetId: _parent,
    lastActionSegmentNo: _segment,
    mentionIn: _mentionIn,
    lastActionAt: _actionAt,
    ...kept
  } = record;
  const { actionAt: _seenAt, ...fields } = seen;
  const expiresAt = new Date(lastUpdate + context.retentionDays * DAY_MS);
  return {
    ...kept,
    ...fields,
    ...storedActionTime(actionAt, lastUpdate),
    expiresAt,
    version: record.version + 1,
  };
}

/**
 * Whether the fields a reader sees (and countFrom) are those the record already has. The optional
 * fields need no check of their own: they come from the record itself unless the activity is the
 * newest, and then lastUpdate or lastActionId differ anyway.
 */
function sameAsRecord(seen: Partial<TrayRecordDoc>, record: TrayRecordDoc): boolean {
  return (Object.keys(seen) as (keyof TrayRecordDoc)[]).every((field) =>
    isDeepStrictEqual(seen[field], record[field]),
  );
}

type Latest = Pick<
  TrayRecordDoc,
  'targetName' | 'parentTargetId' | 'lastActionId' | 'lastActionSegmentNo' | 'feed' | 'mentionIn'
>;

function describe(activity: Activity): Latest {
  return {
    targetName: activity.targetName,
    ...(activity.parentTargetId === undefined ? {} : { parentTargetId: activity.parentTargetId }),
    lastActionId: activity.lastActionId,
    ...(activity.lastActionSegmentNo === undefined
      ? {}
      : { lastActionSegmentNo: activity.lastActionSegmentNo }),
    feed: activity.feed,
    ...(activity.mentionIn === undefined ? {} : { mentionIn: activity.mentionIn }),
  };
}

function describeRecord(record: TrayRecordDoc | undefined): Latest {
  if (!record) throw new Error('describeRecord: no record');
  const { targetName, parentTargetId, lastActionId, lastActionSegmentNo, feed, mentionIn } = record;
  return {
    targetName,
    ...(parentTargetId === undefined ? {} : { parentTargetId }),
    lastActionId,
    ...(lastActionSegmentNo === undefined ? {} : { lastActionSegmentNo }),
    feed,
    ...(mentionIn === undefined ? {} : { mentionIn }),
  };
}

/**
 * Rewrites a user's snapshots in a record to `as` (user.didDelete: deletedActor), each keeping its
 * `at`, or 'unchanged' when every one of them reads so already.
 */
export function renameActor(record: TrayRecordDoc, as: ActorInfo): TrayRecordDoc | 'unchanged' {
  const differs = (actor: ActorSnapshot) =>
    actor.name !== as.name ||
    actor.deleted !== as.deleted ||
    actor.imageUrl !== as.imageUrl ||
    actor.avatarCustomUrl !== as.avatarCustomUrl;
  if (!record.actors.some((actor) => actor.userId === as.userId && differs(actor))) return 'unchanged';
  return {
    ...record,
    actors: record.actors.map((actor) => (actor.userId === as.userId ? { ...as, at: actor.at } : actor)),
    version: record.version + 1,
  };
}

import type { ActorLogEntry, ActorSnapshot, TrayRecordDoc } from '../../shared/tray/tray-record.ts';
import { recordKey, type Activity } from './activity.ts';

const DAY_MS = 24 * 3600 * 1000;
const MAX_NAMED_ACTORS = 3;

export interface ApplyOptions {
  /** Days a record lives after lastUpdate (TRAY_RETENTION_DAYS). */
  retentionDays: number;
}

/**
 * The grouping core (platform document 2.3): folds one activity into a recipient's record. Pure.
 * Returns 'unchanged' when the record already holds this action or a later one by the same actor,
 * so a redelivered job writes nothing and a record the user has read stays read.
 */
export function applyActivity(
  record: TrayRecordDoc | undefined,
  activity: Activity,
  recipientId: string,
  options: ApplyOptions,
): TrayRecordDoc | 'unchanged' {
  const entry: ActorLogEntry = {
    userId: activity.actor.userId,
    at: activity.at,
    actionId: activity.lastActionId,
  };
  const previous = record?.actorLog.find((logged) => logged.userId === entry.userId);
  if (previous && compare(previous, entry) >= 0) return 'unchanged';

  const actorLog = [...(record?.actorLog ?? []).filter((logged) => logged.userId !== entry.userId), entry];
  const newest = !record || compare(entry, { at: record.lastUpdate, actionId: record.lastActionId }) > 0;
  // Fields that describe "the latest action" come from the newest activity; an older one delivered
  // late only adds its actor (out-of-order delivery never moves lastUpdate backwards).
  const latest = newest ? describe(activity) : describeRecord(record);
  const lastUpdate = newest ? activity.at : (record?.lastUpdate ?? activity.at);
  return {
    _id: recordKey(activity.verb, activity.targetId, recipientId),
    userId: recipientId,
    verb: activity.verb,
    targetId: activity.targetId,
    targetType: activity.targetType,
    ...latest,
    actors: namedActors(actorLog, record?.actors ?? [], activity),
    actorsCount: actorLog.length,
    lastUpdate,
    // New activity makes a read record unread again; a new record starts unread.
    hasRead: false,
    expiresAt: new Date(lastUpdate + options.retentionDays * DAY_MS),
    version: (record?.version ?? 0) + 1,
    actorLog,
  };
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
 * The newest three distinct actors, newest first (2.3.3). Only the acting user can enter the top
 * three, so every name needed is either already in `actors` or comes with the activity.
 */
function namedActors(log: ActorLogEntry[], actors: ActorSnapshot[], activity: Activity): ActorSnapshot[] {
  return [...log]
    .sort((a, b) => compare(b, a))
    .slice(0, MAX_NAMED_ACTORS)
    .map((entry) => {
      if (entry.userId === activity.actor.userId) return { ...activity.actor, at: entry.at };
      // Unreachable for records this core wrote; the id stands in rather than failing the job.
      return (
        actors.find((actor) => actor.userId === entry.userId) ?? {
          userId: entry.userId,
          name: entry.userId,
          at: entry.at,
        }
      );
    });
}

/** Orders actions by time, then by id so equal times still have one order. */
function compare(a: { at: number; actionId: string }, b: { at: number; actionId: string }): number {
  if (a.at !== b.at) return a.at - b.at;
  return a.actionId < b.actionId ? -1 : a.actionId > b.actionId ? 1 : 0;
}

/** Rewrites a user's snapshots in a record (user.didDelete), or 'unchanged' when there are none. */
export function renameActor(
  record: TrayRecordDoc,
  userId: string,
  name: string,
): TrayRecordDoc | 'unchanged' {
  if (!record.actors.some((actor) => actor.userId === userId && (actor.name !== name || actor.imageUrl))) {
    return 'unchanged';
  }
  return {
    ...record,
    actors: record.actors.map((actor) => (actor.userId === userId ? { userId, name, at: actor.at } : actor)),
    version: record.version + 1,
  };
}

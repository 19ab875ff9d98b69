import type { InboxState } from '../domain/inbox-state.ts';
import type { TrayRecord } from '../domain/tray-record.ts';
import type { NotificationRecord } from './api-schema/notification-record.ts';

export type { NotificationRecord };

/** 2.1: up to 3 latest actors, newest first; only their names are public. */
function publicActors(actors: TrayRecord['actors']): NotificationRecord['actors'] {
  // A loop rather than slice and map: no intermediate array per record of a page.
  const names: NotificationRecord['actors'] = [];
  for (let i = 0; i < actors.length && i < 3; i += 1) {
    const actor = actors[i];
    if (actor) names.push({ name: actor.name });
  }
  return names;
}

/**
 * Maps a reader's record to its public shape; `description` is rendered by the caller (per locale).
 * A record read with its inbox state (v3 history, an inbox mark, a wake-up) carries it; v2 reads none.
 */
export function toNotificationRecord(
  record: TrayRecord & Partial<InboxState>,
  description: string,
): NotificationRecord {
  const latest = record.actors[0];
  return {
    v_tarid_uid: record.key,
    description,
    verb: record.verb,
    // docs/contract.md#tray-records: the profile image of the latest actor; '' when that actor has none.
    imageUrl: latest?.imageUrl ?? '',
    ...(latest?.avatarCustomUrl ? { avatarCustomUrl: latest.avatarCustomUrl } : {}),
    targetType: record.targetType,
    targetName: record.targetName,
    hasRead: record.hasRead,
    lastUpdate: record.lastUpdate,
    actors: publicActors(record.actors),
    actorsCount: record.actorsCount,
    ...(record.parentTargetId === undefined ? {} : { parentTargetId: record.parentTargetId }),
    targetId: record.targetId,
    lastActionId: record.lastActionId,
    ...(record.lastActionSegmentNo === undefined ? {} : { lastActionSegmentNo: record.lastActionSegmentNo }),
    ...(record.isSeen === undefined
      ? {}
      : {
          isSeen: record.isSeen,
          archivedAt: record.archivedAt ?? null,
          snoozedUntil: record.snoozedUntil ?? null,
        }),
  };
}

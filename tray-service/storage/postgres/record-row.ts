import type { ActorSnapshot, FeedRef, TrayRecord, TrayVerb } from '../../domain/tray-record.ts';

/** The columns of tray_records a reader's record is made of, in the order toTrayRecord reads them. */
export const RECORD_COLUMNS = `user_id, key, verb, target_id, target_type, target_name, parent_target_id,
  last_action_id, last_action_segment_no, feed, mention_in, actors, actors_count, last_update, has_read,
  unread_at, changed_at`;

/** A tray_records row as node-postgres returns it (bigint comes back as a string). */
export interface RecordRow {
  user_id: string;
  key: string;
  verb: string;
  target_id: string;
  target_type: string;
  target_name: string;
  parent_target_id: string | null;
  last_action_id: string;
  last_action_segment_no: string | null;
  feed: FeedRef;
  mention_in: string | null;
  actors: ActorSnapshot[];
  actors_count: number;
  last_update: string;
  has_read: boolean;
  unread_at: string;
  changed_at: string;
}

/** The record as readers see it: optional fields absent rather than null. */
export function toTrayRecord(row: RecordRow): TrayRecord {
  return {
    key: row.key,
    userId: row.user_id,
    verb: row.verb as TrayVerb,
    targetId: row.target_id,
    targetType: row.target_type as TrayRecord['targetType'],
    targetName: row.target_name,
    ...(row.parent_target_id === null ? {} : { parentTargetId: row.parent_target_id }),
    lastActionId: row.last_action_id,
    ...(row.last_action_segment_no === null
      ? {}
      : { lastActionSegmentNo: Number(row.last_action_segment_no) }),
    feed: row.feed,
    ...(row.mention_in === null ? {} : { mentionIn: row.mention_in as NonNullable<TrayRecord['mentionIn']> }),
    actors: row.actors,
    actorsCount: row.actors_count,
    lastUpdate: Number(row.last_update),
    hasRead: row.has_read,
    unreadAt: Number(row.unread_at),
    changedAt: Number(row.changed_at),
  };
}
